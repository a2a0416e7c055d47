package vaultgen

import "strings"

// What the notes are written with. None of these is a control name, none
// starts with a dot, and none holds "quorble", the word the search
// benchmarks look for and must not find.
var (
	englishWords = strings.Fields(`the a of and to in is it that for on with as was at by
		this be from or an are not have but which one all were when we there can
		your their more if about out up them some would so into has its only
		also then than just like time people year way day thing world life hand
		part child eye woman place work week case point number group problem fact
		note notes idea ideas draft plan meeting project review summary outline
		question answer reading writing thinking keeping editing moving sorting
		garden river mountain winter summer autumn spring morning evening market
		letter paper window table kitchen station bridge harbour lantern forest
		book chapter author quote source reference method result experiment data
		model system process design pattern principle habit goal task deadline
		budget invoice client contract team manager colleague friend family trip
		recipe bread coffee tea walk run sleep health doctor music film podcast
		interesting important useful simple complex quick slow early late next
		remember consider compare decide follow check finish start continue build`)
	russianWords = strings.Fields(`и в не на что с как это по но из у за от о
		заметка заметки идея идеи план встреча проект обзор вопрос ответ книга
		глава автор цитата источник метод результат данные модель система процесс
		задача цель срок бюджет команда друг семья поездка рецепт хлеб кофе чай
		прогулка сон здоровье музыка фильм утро вечер зима лето осень весна
		важно полезно просто сложно быстро медленно рано поздно дальше потом
		помнить сравнить решить проверить закончить начать продолжить построить`)
	tagWords = strings.Fields(`idea work home project reading book meeting todo
		someday review health finance travel recipe journal research draft
		person place quote inbox evergreen literature fleeting проект чтение идея`)
	emojis = strings.Fields(`💡 📚 🗂 ✅ 🌱 🔥 ⭐ 📝 🧠 🏠 💬 🎯`)
	langs  = strings.Fields(`go python bash sql json yaml text`)
)

// topFolders are the vault's first folders, as a person's vault has them.
var topFolders = []string{
	"Inbox", "Daily", "Projects", "Areas", "Resources", "Archive",
	"Заметки", "📚 Books", "Templates", "Work",
}

// attachmentFolders are what folders of attachments are called.
var attachmentFolders = []string{"attachments", "Attachments", "assets", "Вложения", "_resources"}
