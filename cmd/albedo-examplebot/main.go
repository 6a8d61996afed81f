// Command albedo-examplebot is a complete albedo bot, built on the client
// package: it serves the turns of sessions whose provider is bot:<its name>
// and answers each with statistics of the conversation so far; and it
// serves a tool, word_count, that models may call. It needs no
// network beyond the daemon, which makes it a useful example and a test
// peer.
//
//	albedo bots add example            # prints the token
//	ALBEDO_BOT_TOKEN=… albedo-examplebot
//	albedo sessions new --provider bot:example
//
// It finds the daemon through $ALBEDO_HOME/daemon.json (--home), follows it
// across restarts, and, when its own connection drops mid-turn, gets the
// turn again once it is back. Given a server's URL instead (--url, or
// $ALBEDO_URL when --home is not given), it connects there and reads no
// home; its token may then come from $ALBEDO_TOKEN too:
//
//	ALBEDO_URL=https://albedo.example ALBEDO_TOKEN=… albedo-examplebot
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"albedo/client"
	"albedo/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "albedo-examplebot:", err)
	if errors.As(err, new(*usageError)) {
		os.Exit(2)
	}
	os.Exit(1)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("albedo-examplebot", flag.ContinueOnError)
	home := fs.String("home", "", "the albedo home `DIR` (default $ALBEDO_HOME, else the standard place)")
	url := fs.String("url", "", "a server's `URL` instead of a home (default $ALBEDO_URL unless --home is given)")
	// No default from the environment here: the usage would print it,
	// and it is a secret.
	token := fs.String("token", "", "the bot's `TOKEN` (default $ALBEDO_BOT_TOKEN; with a URL, else $ALBEDO_TOKEN)")
	pace := fs.Duration("pace", 50*time.Millisecond, "the pause `D` between streamed pieces of an answer, and per word word_count counts")
	if ok, err := parseFlags(fs, args, stdout); !ok {
		return err
	}
	if *token == "" {
		*token = os.Getenv("ALBEDO_BOT_TOKEN")
	}
	if *url != "" && *home != "" {
		return errors.New("--url and --home exclude each other")
	}
	if *url == "" && *home == "" {
		*url = os.Getenv(client.EnvURL)
	}
	if *token == "" && *url != "" {
		*token = os.Getenv(client.EnvToken)
	}
	if *token == "" {
		return errors.New("no token: set ALBEDO_BOT_TOKEN (or ALBEDO_TOKEN with ALBEDO_URL) or --token (albedo bots add NAME prints one)")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	c, err := client.New(client.Options{Home: *home, URL: *url, Token: *token, Name: "albedo-examplebot/1"})
	if err != nil {
		return err
	}
	b := &bot{log: log, pace: *pace}
	st := c.Stream(client.StreamOptions{
		OnTurn: func(t wire.TurnPush) { go b.answer(ctx, t) },
		Tools:  []wire.ToolSpec{wordCount},
		OnTool: func(t wire.ToolPush) { go b.tool(ctx, t) },
		OnState: func(s client.State) {
			log.Info("connection", "state", s.Phase.String(), "attempt", s.Attempt)
		},
	})
	b.st = st
	defer st.Close()
	log.Info("serving turns; Ctrl-C stops")
	select {
	case <-ctx.Done():
		return nil
	case <-st.Done():
		return st.Err()
	}
}

type bot struct {
	log  *slog.Logger
	pace time.Duration
	st   *client.Stream
}

// answer streams the statistics of t's transcript, a sentence at a time.
func (b *bot) answer(ctx context.Context, t wire.TurnPush) {
	b.log.Info("turn", "session", t.Session, "turn", t.TurnID, "messages", len(t.Messages))
	for _, piece := range stats(t.Messages) {
		if err := b.st.Reply(ctx, t.TurnID, piece, false, ""); err != nil {
			// The connection dropped or the turn was interrupted: the daemon
			// hands the turn out again if it still wants an answer.
			b.log.Warn("reply", "turn", t.TurnID, "err", err)
			return
		}
		select {
		case <-time.After(b.pace):
		case <-ctx.Done():
			return
		}
	}
	if err := b.st.Reply(ctx, t.TurnID, "", true, ""); err != nil {
		b.log.Warn("finish", "turn", t.TurnID, "err", err)
	}
}
