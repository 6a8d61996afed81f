package term

import (
	"cmp"
	"time"

	"albedo/client"
	"albedo/wire"
)

// pane is where keys go.
type pane int

const (
	paneComposer pane = iota
	paneSidebar
)

// sidebarPref is what the person chose for the sidebar with Ctrl-S.
type sidebarPref int

const (
	sidebarAuto sidebarPref = iota // as the width has it (sidebarShown)
	sidebarOn
	sidebarOff
)

// Model is the whole state of the terminal client. Only the UI goroutine
// touches it; draw functions only read it.
type Model struct {
	Width, Height int

	Sessions []*SessionView // sidebar order
	Focus    int            // index into Sessions; -1 when there is none
	Pane     pane
	sidebar  sidebarPref

	Composer []rune // the text being written; '\n' for Alt-Enter
	Cursor   int    // rune index into Composer
	Sent     []string
	recall   int // index into Sent while recalling with Up; len(Sent) when not

	Conn      client.State
	connSince time.Time // when Conn last changed, for the countdown

	Notice      string // one line for the status bar: errors, hints
	NoticeErr   bool
	noticeUntil time.Time // when it goes; zero: when replaced (or, noticeConn, when the connection changes)
	noticeConn  bool
	noticeAt    time.Time // when it was set
	elapsed     string    // the running turn's time as the status bar last showed it
	ShowHelp    bool
	Times       bool            // message headers show their time (Ctrl-T)
	ReadOnly    bool            // a viewer's shared session: nothing is sent or changed
	Server      string          // the URL of the server the client was pointed at ("" for a home's daemon)
	Quiet       bool            // no bell, no desktop notifications (/notify off)
	TermFocused bool            // the terminal window has the focus (as far as it says)
	helpTop     int             // the first row of the help shown, when it is taller than the screen
	filter      *filter         // the go-to line, when open (sidebar.go)
	asking      *question       // a yes/no question in the status bar (commands.go)
	search      *search         // the search line, when open (find.go)
	pick        *pick           // a message selected for copying (find.go)
	hits        *hits           // a search's results across sessions (hits.go)
	files       *filePick       // the transcript's files, to open (Ctrl-O; files.go)
	jump        *jump           // a hit being opened, its page on its way
	quitArmed   bool            // a Ctrl-C on an idle session asks to confirm
	pasting     bool            // inside a bracketed paste
	pasted      []rune          // the paste so far, inserted whole at its end
	folds       map[rune][]rune // long pastes, by the placeholder that stands for each in the composer (fold.go)
	nextFold    rune
	menuFrom    string // what was typed before Tab chose in the slash menu (slashmenu.go)
	menuSel     int    // the choice, in the commands starting with menuFrom
	Quit        bool
	typedAt     time.Time // when a cmdTyped last went out
	typedIn     string    // and for which session
	wholeTools  bool      // tool calls' long arguments and outputs shown whole (Ctrl-O), not folded
	feedNext    string    // the cursor of the feed's next page ("" at the end)
	feedPaging  bool      // that page was asked for
	focused     []string  // the sessions focused lately, the last last (Recent)

	mention *mentionCycle // a mention Tab goes through the names of (mentions.go)

	models    map[string]*modelList // providers' models, by provider, read once each (models.go)
	modelPick *modelPick            // a Tab going through them

	lostNames map[string]string // sessions the feed took away, by id: their names, until their reset says why (gone.go)

	forksOf  map[string]*originForks // the forks of the focused session's origins, as read (versions.go)
	forksGen int                     // counts the reads of forksOf: a session's versions are of one of them

	Now func() time.Time // injectable clock for relative times
}

// SessionView is one session as the client sees it.
type SessionView struct {
	ID       string
	Title    string
	Epoch    string
	Provider string          // what its turns go to, as the daemon resolves it; "bot:NAME" hands them to a bot
	Parent   *wire.ForkPoint // where a fork came from (nil for a session that is no fork)
	Access   wire.Access     // what this person may do in it, as the daemon says (the feed's, the session's)
	Pinned   bool            // this person pinned it: first in the sidebar (pins.go)
	depth    int             // how many of its ancestors the sidebar shows it under (sidebar.go)
	// families' (sidebar.go), made again at each resort: the forks shown
	// under it, its family's latest activity, and whether it is placed.
	forks     []*SessionView
	family    time.Time
	placed    bool
	Archived  bool  // archived: in the sidebar only when opened from /archived (archive.go)
	archiving bool  // this terminal asked to archive it: the reply, not the feed, takes it out
	meter     meter // its context and cost (meter.go)

	Events []wire.Event // committed events since the last reset, in order
	More   bool         // older history exists before Events

	StreamTurn string // the turn whose reply is streaming
	StreamText string

	Phase      wire.Phase
	TurnID     string
	turnSince  time.Time // when the running turn started, as far as this client knows
	turnOf     string    // the turn turnSince is of
	Queued     int
	LastTurn   string
	Model      string
	defModel   string // the model its turns go to while Model is empty: its profile's (models.go)
	Effort     string
	ETag       string
	Viewers    int
	Pending    int               // tool calls waiting for a decision, as the last status said
	Agent      *wire.AgentStatus // a coding agent's plan, thinking and command output, as the last status said (agent.go)
	People     []wire.Person     // who watches, as the last presence push listed them
	MorePeople int               // people beyond People

	// Participants and Respond: who else answers, and when anyone does
	// (participants.go), as of the event at settingsAt or later; turnBy
	// is who answers turnOf, when its started event names them.
	Participants []string
	Respond      string
	settingsAt   int64
	turnBy       string
	// turnContinues is the reply turnOf runs on (its started event's
	// continues; 0: none), whose rest its stream is (continue.go).
	turnContinues int64

	Unread       int
	LastActivity time.Time
	Last         *wire.FeedLast // its newest message, as the feed last said
	subscribed   bool           // its events come (App.syncSubs)
	history      int64          // the last reset's head: events up to it are history it brings, not news

	// Scrolling: follow the end, or keep Top (a line index) in view.
	Follow bool
	Top    int

	readSent    int64     // the read marker this client last set or heard of (read.go)
	readAt      time.Time // when it last set it
	draft       []rune    // the composer's text while another session has the focus
	draftCursor int
	attached    []wire.Attachment // files for its next message, uploaded (attach.go)
	uploading   []string          // the paths /attach is uploading for it, in order

	calls      toolIndex         // its tool calls, from its Events (tools.go)
	fetched    []wire.Approval   // calls waiting that Events do not hold: older than the history loaded
	fetchedFor string            // the turn and count of waiting calls fetched was read for
	deciding   map[string]string // decisions sent from here that have not landed yet, by call

	versions    map[int64]versionPoint // its messages' versions, by fork point (versions.go)
	versionsGen int                    // the Model's forksGen they were made of

	rendered  transcript  // Events as drawn (transcript.go)
	streaming streamLines // StreamText as drawn
}

// NewModel returns an empty model of the given size.
func NewModel(w, h int) *Model {
	return &Model{Width: w, Height: h, Focus: -1, Now: time.Now, TermFocused: true}
}

// Focused returns the focused session, or nil.
func (m *Model) Focused() *SessionView {
	if m.Focus < 0 || m.Focus >= len(m.Sessions) {
		return nil
	}
	return m.Sessions[m.Focus]
}

func (m *Model) session(id string) *SessionView {
	for _, s := range m.Sessions {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// running says whether a turn runs or waits in s: for a bot, or for
// people to decide its tool calls.
func (s *SessionView) running() bool {
	return s.Phase == wire.PhaseRunning || s.Phase == wire.PhaseWaiting || s.Phase == wire.PhaseApproval
}

// news says whether ev happened while this client watched, rather than
// being history that a reset brings (every subscription starts with
// one). The reset's head says where news begins; the first status after
// it does not: it may come before the history has all arrived, its own
// head running ahead of the events.
func (s *SessionView) news(ev wire.Event) bool {
	return ev.Offset > s.history
}

// caughtUp says whether the history the last reset brings has all come.
func (s *SessionView) caughtUp() bool {
	return len(s.Events) > 0 && s.Events[len(s.Events)-1].Offset >= s.history
}

// name is what the sidebar shows.
func (s *SessionView) name() string {
	if s.Title != "" {
		return s.Title
	}
	if len(s.ID) > 8 {
		return s.ID[len(s.ID)-8:]
	}
	return s.ID
}

func newSessionView(s wire.Session) *SessionView {
	return &SessionView{ID: s.ID, Title: s.Title, Epoch: s.Epoch, Provider: cmp.Or(s.ResolvedProvider, s.Provider), Phase: s.Phase, Model: s.Model,
		Effort: s.Effort, ETag: s.ETag, LastActivity: s.UpdatedAt, Follow: true, Parent: s.Parent, Access: s.Access,
		Participants: s.Participants, Respond: s.Respond, settingsAt: s.Head, Archived: s.Archived, defModel: defaultOf(s)}
}
