package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/access"
	"albedo/hub/provider"
	"albedo/wire"
)

// A provider with a context window (provider.Windowed) is sent, at every
// turn, the newest compaction's summary and every message after what it
// covers, never more than the budget: three quarters of the window, less
// the system text; the rest is the reply's. When the messages since the
// last compaction would pass it, the oldest of them are summarized first,
// by the provider (or its profile's summary_provider), and the summary is
// committed as a compaction event naming the offsets it stands for. The
// log keeps every message: viewers see them all, and a fork from before a
// compaction sends its provider the originals. A message that alone
// passes the budget fails the turn, saying so.

// Compaction's bounds.
const (
	// keepShare is the share of the budget the newest messages keep
	// uncompacted, for the turn to see as they were.
	keepShare = 2
	// summaryShare is the share of the budget a summary may take.
	summaryShare = 4
	// maxCompactions bounds the compactions one turn makes (each covers
	// at least one message) before it gives up.
	maxCompactions = 64
	// compactPage is how many events a compaction reads at a time.
	compactPage = 200
)

// errNothingToCompact says that what a compaction would cover is empty:
// the newest messages, which it keeps, are all there is.
var errNothingToCompact = errors.New("nothing to compact")

// budgetOf is the tokens a turn's transcript may take with p, and
// whether p has a window at all.
func budgetOf(p provider.Provider, req provider.Request, system string) (int, bool) {
	w, ok := p.(provider.Windowed)
	if !ok {
		return 0, false
	}
	return w.Context(req)*3/4 - provider.Tokens(system) - provider.MessageOverhead, true
}

// emptyFailure says whether e is a reply that failed before it said
// anything, which no transcript carries.
func emptyFailure(e wire.Event) bool {
	return e.Type == wire.EventMessage && e.State == wire.MessageFailed && e.Text == ""
}

// msgTokens is what a message costs in a transcript.
func msgTokens(text string) int { return provider.Tokens(text) + provider.MessageOverhead }

// window is what a turn would send: the newest compaction's summary (nil
// if none) and the messages after it, oldest first, or over: they do not
// fit.
type window struct {
	summary *wire.Event
	msgs    []wire.Event
	tokens  int
	over    bool
	// overTokens is what the message that did not fit takes.
	overTokens int
}

// readWindow reads, newest first from upto, the events of types that fit
// in budget, and the compaction they follow.
func (h *Hub) readWindow(ctx context.Context, sp db.Spans, types []wire.EventType, upto int64, budget int) (window, error) {
	var w window
	stopAt := int64(-1) // the offset a compaction covers up to: older messages are in its summary
	var bad error
	// From the head: a compaction made during this turn comes after its
	// input. Messages after upto are later turns'.
	err := h.db.Newest(ctx, sp, append(types[:len(types):len(types)], wire.EventCompaction), math.MaxInt64, 1<<30, func(e db.Event) bool {
		if e.Offset <= stopAt {
			return false
		}
		ev, err := e.Decode()
		if err != nil {
			bad = err
			return false
		}
		if ev.Offset > upto && (ev.Type != wire.EventCompaction || ev.To > upto) {
			return true
		}
		if ev.Type == wire.EventCompaction {
			if w.summary == nil {
				w.summary, stopAt = &ev, ev.To
				w.tokens += msgTokens(ev.Text)
			}
			return true
		}
		if emptyFailure(ev) {
			return true
		}
		if w.tokens+eventTokens(ev) > budget {
			w.over, w.overTokens = true, eventTokens(ev)
			return false
		}
		w.tokens += eventTokens(ev)
		w.msgs = append(w.msgs, ev)
		return true
	})
	if err == nil {
		err = bad
	}
	for i, j := 0, len(w.msgs)-1; i < j; i, j = i+1, j-1 {
		w.msgs[i], w.msgs[j] = w.msgs[j], w.msgs[i]
	}
	return w, err
}

// fitTranscript returns the window a turn of q sends within budget,
// compacting first as often as it takes.
func (h *Hub) fitTranscript(ctx context.Context, ch *channel, p provider.Provider, req provider.Request, upto int64, budget int) (window, error) {
	for range maxCompactions {
		sp, err := h.spansOf(ctx, ch)
		if err != nil {
			return window{}, err
		}
		w, err := h.readWindow(ctx, sp, transcriptTypes(p), upto, budget)
		if err != nil || !w.over {
			return w, err
		}
		_, err = h.compact(ctx, ch, p, req, upto, budget, budget/keepShare, "albedo")
		if errors.Is(err, errNothingToCompact) {
			return w, fmt.Errorf("the transcript cannot fit the context budget of %d tokens: its newest message alone takes about %d; shorten it, or use a model with a larger context (context_tokens)", budget, w.overTokens)
		}
		if err != nil {
			return w, err
		}
	}
	return window{}, fmt.Errorf("the transcript still passes its context budget of %d tokens after %d compactions", budget, maxCompactions)
}

// region is what one compaction covers and what it is made of.
type region struct {
	prev     *wire.Event // the compaction it follows, folded into its summary
	msgs     []wire.Event
	from, to int64
}

// compact summarizes the oldest messages since the last compaction at or
// before upto, keeping the newest that fit in keep, as many as one
// summary request holds, and commits the compaction event. by is who
// asked. It returns the event, or errNothingToCompact.
func (h *Hub) compact(ctx context.Context, ch *channel, p provider.Provider, req provider.Request, upto int64, budget, keep int, by string) (wire.Event, error) {
	ch.compactMu.Lock()
	defer ch.compactMu.Unlock()
	spans, err := h.spansOf(ctx, ch)
	if err != nil {
		return wire.Event{}, err
	}
	r, err := h.compactRegion(ctx, ch, spans, transcriptTypes(p), upto, budget, keep)
	if err != nil {
		return wire.Event{}, err
	}
	sp := p
	if w, ok := p.(provider.Windowed); ok && w.Summarizer() != "" {
		if sp, err = h.providers.Get(w.Summarizer()); err != nil {
			return wire.Event{}, fmt.Errorf("summary provider: %w", err)
		}
	}
	sreq := provider.Request{Session: ch.id, TurnID: req.TurnID, Model: req.Model, Provider: req.Provider, AuthorID: req.AuthorID,
		Messages: summaryMessages(r, budget/summaryShare)}
	if sp != p {
		sreq.Model = "" // the summary provider's own
	}
	var usage *wire.Usage
	sreq.Usage = func(u wire.Usage) {
		if pr, ok := sp.(provider.Pricer); ok && pr.Prices() != nil {
			cost := pr.Prices().Cost(u)
			u.Cost = &cost
		}
		usage = &u
	}
	var text strings.Builder
	// At most the tokens asked for (4 bytes a token): with the newest
	// messages kept, a summary leaves a quarter of the budget free.
	limit := min(h.opts.MaxReply, budget/summaryShare*4)
	err = sp.Stream(ctx, sreq, func(d string) {
		if text.Len()+len(d) <= limit {
			text.WriteString(d)
		}
	})
	if err != nil {
		return wire.Event{}, fmt.Errorf("summarize offsets %d..%d: %w", r.from, r.to, err)
	}
	ev := wire.Event{Type: wire.EventCompaction, From: r.from, To: r.to, Text: strings.TrimSpace(text.String()),
		Author: sp.Author(sreq), By: by}
	ev.SetUsage(usage)
	return h.commitCompaction(ctx, ch.id, ev, usage, req)
}

// commitCompaction appends a compaction event and the usage of its
// summary.
func (h *Hub) commitCompaction(ctx context.Context, session string, ev wire.Event, usage *wire.Usage, req provider.Request) (wire.Event, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return wire.Event{}, err
	}
	var out []db.Event
	_, err = h.db.Writer().Do(context.WithoutCancel(ctx), func(tx *db.Tx) error {
		var err error
		if out, err = tx.Append(ctx, session, ev); err != nil {
			return err
		}
		return tx.RecordUsage(ctx, db.TurnUsage{TurnID: "compaction:" + id.String(), Session: session,
			AuthorID: req.AuthorID, Provider: req.Provider, Usage: usage})
	})
	if err != nil {
		return wire.Event{}, err
	}
	return out[0].Decode()
}

// lastCompaction is the newest compaction of messages at or before upto,
// nil if none.
func (h *Hub) lastCompaction(ctx context.Context, sp db.Spans, upto int64) (*wire.Event, error) {
	var prev *wire.Event
	var bad error
	err := h.db.Newest(ctx, sp, []wire.EventType{wire.EventCompaction}, math.MaxInt64, 1<<30, func(e db.Event) bool {
		ev, err := e.Decode()
		if err == nil && ev.To > upto {
			return true // of messages after upto (one made by hand, of later inputs)
		}
		prev, bad = &ev, err
		return false
	})
	if err == nil {
		err = bad
	}
	return prev, err
}

// tailFrom is the offset of the oldest of the newest events of types
// after start and up to upto that fit in keep, which a compaction keeps
// as they are: always the newest, which a turn answers (upto+1 if there
// is none).
func (h *Hub) tailFrom(ctx context.Context, sp db.Spans, types []wire.EventType, start, upto int64, keep int) (int64, error) {
	tail, kept := upto+1, 0
	var bad error
	err := h.db.Newest(ctx, sp, types, upto, 1<<30, func(e db.Event) bool {
		ev, err := e.Decode()
		if err != nil || e.Offset <= start {
			bad = err
			return false
		}
		if emptyFailure(ev) {
			return true
		}
		t := eventTokens(ev)
		if kept > 0 && kept+t > keep {
			return false
		}
		kept += t
		tail = e.Offset
		return true
	})
	if err == nil {
		err = bad
	}
	return tail, err
}

// compactRegion finds what the next compaction covers: the events of
// types after the last compaction at or before upto, oldest first, up to
// the newest that fit in keep (excluded), as many as a summary request
// of budget holds with the last summary.
func (h *Hub) compactRegion(ctx context.Context, ch *channel, sp db.Spans, types []wire.EventType, upto int64, budget, keep int) (region, error) {
	var r region
	var err error
	if r.prev, err = h.lastCompaction(ctx, sp, upto); err != nil {
		return r, err
	}
	start := int64(0)
	if r.prev != nil {
		start = r.prev.To
	}
	tail, err := h.tailFrom(ctx, sp, types, start, upto, keep)
	if err != nil {
		return r, err
	}
	room := budget - budget/summaryShare - summaryOverhead(budget)
	if r.prev != nil {
		room -= msgTokens(r.prev.Text)
	}
	used := 0
	for after := start; after < tail-1 && used < room; {
		evs, err := h.eventsAfter(ctx, ch, after, compactPage, 0)
		if err != nil {
			return r, err
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			after = e.Offset
			if e.Offset >= tail || used >= room {
				break
			}
			ev, err := e.Decode()
			if err != nil {
				return r, err
			}
			if !slices.Contains(types, ev.Type) || emptyFailure(ev) {
				continue
			}
			ev.Role, ev.Text = summaryText(ev)
			if t := msgTokens(ev.Text); used+t > room {
				if len(r.msgs) > 0 {
					used = room
					break
				}
				ev.Text = cutToTokens(ev.Text, room-provider.MessageOverhead)
			}
			used += msgTokens(ev.Text)
			r.msgs = append(r.msgs, ev)
		}
	}
	if len(r.msgs) == 0 {
		return r, errNothingToCompact
	}
	r.from, r.to = r.msgs[0].Offset, r.msgs[len(r.msgs)-1].Offset
	return r, nil
}

// cutToTokens cuts text to about n tokens, saying where.
func cutToTokens(text string, n int) string {
	const note = "\n[… the rest of this message is left out of the summary]"
	cut := max(0, (n-provider.Tokens(note))*4)
	for cut > 0 && cut < len(text) && provider.Tokens(text[:cut]) > n-provider.Tokens(note) {
		cut = cut * 3 / 4
	}
	for cut > 0 && cut < len(text) && (text[cut]&0xC0) == 0x80 {
		cut--
	}
	return text[:min(cut, len(text))] + note
}

// summaryPrompt tells the summarizer what a compaction's summary is for.
const summaryPrompt = `You compact a conversation that goes on after you. Write a summary that lets it go on without the messages you are given: the task and its goal, what was decided and why, facts, names, numbers, code identifiers and file names, what was tried and failed, and the questions still open. The summary replaces those messages and the summary before them, if there is one: keep everything that one holds. Write it as notes, in the conversation's language, in at most %d words. Answer with the summary alone.`

// summaryAsk ends a summary's request.
const summaryAsk = "Write the summary of the conversation above now."

// summaryOverhead is what a summary's request costs beyond the messages
// it summarizes: its instructions, and the word that the summary so far
// is one.
func summaryOverhead(budget int) int {
	return msgTokens(summaryWords(budget/summaryShare)) + msgTokens(summaryAsk) + provider.Tokens(summarySoFar)
}

// summarySoFar introduces the last summary in a summary's request.
const summarySoFar = "The summary so far:\n\n"

// summaryWords is the summarizer's instructions, for a summary of at most
// tokens.
func summaryWords(tokens int) string { return fmt.Sprintf(summaryPrompt, max(20, tokens*3/4)) }

// summaryMessages is the request of r's summary, in at most tokens.
func summaryMessages(r region, tokens int) []provider.Message {
	out := []provider.Message{{Role: wire.RoleSystem, Author: "system", Text: summaryWords(tokens)}}
	if r.prev != nil {
		out = append(out, provider.Message{Role: wire.RoleUser, Author: "summary", Text: summarySoFar + r.prev.Text})
	}
	for _, m := range r.msgs {
		out = append(out, provider.Message{Role: m.Role, Author: modelAuthor(m), Text: m.Text})
	}
	return append(out, provider.Message{Role: wire.RoleUser, Author: "albedo", Text: summaryAsk})
}

// transcript is what a turn answering the message at upto sends p: with
// a context window, the newest compaction's summary (as a user's message
// that says what it is) and the messages after it, compacting first when
// they would not fit (fitTranscript); without one (echo, a bot), the
// newest messages within the daemon's limits, which such a provider
// asks for (HistoryLimiter) or takes as they come.
//
// tokens is what the transcript and the system text take, as compaction
// counts them (0 without a window): the count the turn's closing event
// starts from (Event.Context).
func (h *Hub) transcript(ctx context.Context, ch *channel, p provider.Provider, req *provider.Request, upto int64, system string) (_ []wire.Event, tokens int, _ error) {
	if budget, ok := budgetOf(p, *req, system); ok {
		w, err := h.fitTranscript(ctx, ch, p, *req, upto, budget)
		if err != nil {
			return nil, 0, err
		}
		var out []wire.Event
		if w.summary != nil {
			out = append(out, wire.Event{Role: wire.RoleUser, Author: "summary",
				Text: fmt.Sprintf("[A summary of messages %d to %d, which it stands for]\n\n%s", w.summary.From, w.summary.To, w.summary.Text)})
		}
		tokens = w.tokens
		if system != "" {
			tokens += msgTokens(system)
		}
		return append(out, w.msgs...), tokens, nil
	}
	limit := h.opts.MaxTranscriptMessages
	hl, asks := p.(provider.HistoryLimiter)
	if asks {
		limit = min(limit, hl.MaxMessages())
	}
	sp, err := h.spansOf(ctx, ch)
	if err != nil {
		return nil, 0, err
	}
	evs, err := h.db.Transcript(ctx, sp, transcriptTypes(p), upto, h.opts.MaxTranscript, limit)
	if err == nil && !asks && len(evs) > 0 && evs[0].Offset > 1 {
		// Left out by the daemon's bounds, not asked for fewer: said to
		// the provider (a bot's turn push), not left out unsaid.
		req.Earlier, err = h.db.MessagesBefore(ctx, sp, evs[0].Offset)
	}
	out := evs[:0]
	for _, e := range evs {
		if !emptyFailure(e) {
			out = append(out, e)
		}
	}
	return out, 0, err
}

// Compact compacts a session by hand, as by: the messages since its last
// compaction but the newest (those within a quarter of the budget) are
// summarized into a compaction event, which it returns. A session whose
// provider has no context window is bad_request; one with nothing to
// compact, conflict.
func (h *Hub) Compact(ctx context.Context, by access.Principal, session string) (wire.Event, error) {
	ch, werr := h.channel(ctx, session)
	if werr != nil {
		return wire.Event{}, werr
	}
	sess, err := h.db.Session(ctx, session)
	if err != nil {
		return wire.Event{}, wireErr(err)
	}
	p, err := h.providers.Get(sess.Provider)
	if err != nil {
		return wire.Event{}, wire.Errorf(wire.CodeBadRequest, "%v", err)
	}
	req := provider.Request{Session: session, Model: sess.Model, Provider: cmp.Or(sess.Provider, h.providers.Default(), "echo"), AuthorID: by.AuthorID()}
	system := sess.System
	if sp, ok := p.(provider.SystemPrompter); ok && system == "" {
		system = sp.System()
	}
	budget, ok := budgetOf(p, req, system)
	if !ok {
		return wire.Event{}, wire.Errorf(wire.CodeBadRequest, "provider %s has no context window: its turns are never compacted", req.Provider)
	}
	ev, err := h.compact(ctx, ch, p, req, sess.Head, budget, budget/summaryShare, cmp.Or(by.Name, "albedo"))
	if errors.Is(err, errNothingToCompact) {
		return wire.Event{}, wire.Errorf(wire.CodeConflict, "nothing to compact: the messages since the last compaction are the newest, which it keeps")
	}
	if err != nil {
		return wire.Event{}, wireErr(err)
	}
	return ev, nil
}
