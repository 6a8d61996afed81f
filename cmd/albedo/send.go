package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

const sendHelp = `Submit an input to a session, wait for its turn, and print the reply.

TEXT is the words after SESSION joined by single spaces (quote them to keep
other spacing); a sole "-" reads the text from standard input instead; text
that starts with "-" goes after "--". Text of nothing but spaces is refused,
unless --file attaches files: each is uploaded (once: a file the daemon
holds already is not sent again) and carried by the message.

On a terminal the reply is shown as it streams; otherwise (a pipe, a file)
only the committed reply is printed, once. While the turn waits for a bot of
a bot:NAME session to connect, that is said on standard error. Ctrl-C or
--timeout stops waiting, not the turn: the input stays queued.

` + sessionArgHelp + `

Exit status:
  0  the reply was printed
  1  another error (no daemon could be reached, a refused request …)
  2  usage: bad arguments, empty text, a SESSION that names several sessions
  4  no such session
  5  the turn failed (the provider's error is printed)
  6  the turn was interrupted (what streamed before is printed)
  7  stopped waiting (Ctrl-C, --timeout); the input stays queued`

func newSendCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	var files []string
	cmd := &cobra.Command{
		Use:   "send SESSION TEXT... [--file PATH]...",
		Short: "send an input, wait for its turn, print the reply",
		Long:  sendHelp,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(files) > wire.MaxAttachments {
				return usageErrorf("%d files: a message carries at most %d", len(files), wire.MaxAttachments)
			}
			text := ""
			if len(args) > 1 || len(files) == 0 {
				var err error
				if text, err = inputText(args[1:], g.stdin); err != nil {
					return err
				}
			}
			c, s, err := g.named(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			var atts []wire.Attachment
			for _, path := range files {
				a, err := c.PutFile(cmd.Context(), path)
				if err != nil {
					return err
				}
				atts = append(atts, a)
			}
			return g.send(cmd.Context(), c, s, text, atts, timeout)
		},
		ValidArgsFunction: g.completeSessions,
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "stop waiting for the reply after this long, e.g. 30s (0: wait as long as it takes); the input stays queued")
	cmd.Flags().StringArrayVar(&files, "file", nil, "attach this file (repeat for several, at most 16); the text may then be left out")
	return cmd
}

// inputText is the text of send's words: joined by spaces, or standard
// input when the only word is "-". Blank text is a usage error.
func inputText(words []string, stdin io.Reader) (string, error) {
	text := strings.Join(words, " ")
	if len(words) == 1 && words[0] == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		// The newline that ends a file or an echo is not part of the text.
		text = strings.TrimRight(string(b), "\r\n")
	}
	if strings.TrimSpace(text) == "" {
		return "", usageErrorf("the text is empty: nothing to send (give TEXT, or --file)")
	}
	return text, nil
}

// send watches s from its current head, submits the input (retried with
// the same input_id across a restart), and follows its turn to the end.
func (g *globals) send(ctx context.Context, c *client.Client, s wire.Session, text string, atts []wire.Attachment, timeout time.Duration) error {
	st := c.Stream(client.StreamOptions{Budget: 0})
	defer st.Close()
	sub := st.Subscribe(s.ID, client.Cursor{Epoch: s.Epoch, Offset: s.Head})
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	r, err := c.PutInput(ctx, s.ID, id.String(), text, atts...)
	if err != nil {
		return err
	}
	return g.waitTurn(ctx, sub, s, r.TurnID, timeout)
}

// waitTurn follows turn of s on sub to its end (at most timeout, 0 for
// no bound), printing its reply, and returns its exit status.
func (g *globals) waitTurn(ctx context.Context, sub *client.Subscription, s wire.Session, turn string, timeout time.Duration) error {
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	w := &turnWait{g: g, s: s, turn: turn}
	if g.outTTY {
		w.printer = &replyPrinter{w: g.stdout}
	}
	err := w.follow(wctx, sub)
	// Only an end that the wait's context made is giving up: a turn that
	// ended as the timeout fired has its own exit status.
	if stop := wctx.Err(); stop != nil && errors.Is(err, stop) {
		if ctx.Err() != nil {
			return w.gaveUp("stopped waiting")
		}
		return w.gaveUp(fmt.Sprintf("no reply within %s", timeout))
	}
	return err
}

// turnWait follows one turn of send: it prints the reply, says when the
// turn waits for a bot, and turns the turn's end into an exit status.
// Only send's goroutine uses it.
type turnWait struct {
	g       *globals
	s       wire.Session
	turn    string
	printer *replyPrinter // nil when stdout is not a terminal
	reply   *wire.Event   // the committed reply, once it is
	waiting bool          // the session's turn waits for a bot
}

// follow reads sub until the turn ends, and returns how it ended.
func (w *turnWait) follow(ctx context.Context, sub *client.Subscription) error {
	for {
		it, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		switch {
		case it.Op == wire.PushStatus:
			w.status(it.Status)
		case (it.Op == wire.PushPartial || it.Op == wire.PushDelta) && it.Text.TurnID == w.turn:
			w.printer.text(it.Op, it.Text)
		case it.Op == wire.PushEvent && it.Event.TurnID == w.turn:
			if done, err := w.event(it.Event); done {
				return err
			}
		}
	}
}

// status says, once each time it starts, that the turn waits for a bot.
func (w *turnWait) status(st *wire.StatusPush) {
	waiting := st.Phase == wire.PhaseWaiting
	if waiting && !w.waiting {
		printf(w.g.stderr, "albedo: waiting for %s to connect; the turn runs when it does (Ctrl-C stops waiting, the input stays queued)\n", w.who())
	}
	w.waiting = waiting
}

// who is the bot a waiting turn needs, as a person would name it.
func (w *turnWait) who() string {
	if name, ok := strings.CutPrefix(w.s.Provider, "bot:"); ok {
		return "bot " + name
	}
	return "the provider " + w.s.Provider
}

// event handles an event of the turn; done says the turn has ended, with
// err its exit status.
func (w *turnWait) event(ev *wire.Event) (done bool, err error) {
	if ev.Type == wire.EventMessage && ev.Role == wire.RoleAssistant {
		w.reply = ev
		if w.printer != nil && !w.printer.commit(ev, "") && ev.Text != "" {
			fmt.Fprintln(w.g.stdout, ev.Text)
		}
		return false, nil
	}
	if ev.Type != wire.EventTurn || ev.State == wire.TurnStarted {
		return false, nil
	}
	if w.printer != nil {
		w.printer.breakLine()
	} else if w.reply != nil && w.reply.Text != "" {
		fmt.Fprintln(w.g.stdout, w.reply.Text)
	}
	switch ev.State {
	case wire.TurnFailed:
		return true, &exitError{code: exitTurnFailed, err: fmt.Errorf("the turn failed: %s", ev.Error)}
	case wire.TurnInterrupted:
		return true, &exitError{code: exitInterrupted, err: fmt.Errorf("the turn was interrupted (%s)", ev.Reason)}
	}
	return true, nil
}

// gaveUp is send's end when it stops waiting before the turn has: why,
// and where the input went.
func (w *turnWait) gaveUp(why string) error {
	w.printer.breakLine()
	where := "the turn goes on"
	if w.waiting {
		where = fmt.Sprintf("%s has not connected; the input stays queued and runs when it does", w.who())
	}
	return &exitError{code: exitGaveUp, err: fmt.Errorf("%s: %s (albedo tail %s shows it)", why, where, w.s.ID)}
}
