package sandbox_test

import (
	"fmt"

	"github.com/vaultgate/vaultgate/sandbox"
)

func ExampleMask() {
	secrets := []sandbox.Secret{{Name: "GITHUB_TOKEN", Value: "ghp_example", Commands: []string{"git", "gh"}}}
	fmt.Println(sandbox.Mask("remote: https://x:ghp_example@github.com", secrets))
	// Output: remote: https://x:***GITHUB_TOKEN***@github.com
}

func ExampleBuildEnv() {
	environ := []string{"PATH=/usr/bin:/bin", "LD_PRELOAD=/tmp/x.so", "DATABASE_URL=postgres://…", "HOME=/root"}
	fmt.Println(sandbox.BuildEnv([]string{"PATH", "LD_PRELOAD", "DATABASE_URL", "LANG"}, environ, "/tmp/vaultgate-home"))
	// Output: [PATH=/usr/bin:/bin HOME=/tmp/vaultgate-home]
}
