package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/db"
	"albedo/hub"
	"albedo/wire"
)

// `albedo tokens` writes the store itself rather than asking a daemon: a
// team server's first owner token cannot come through its API, and a
// daemon need not run. A daemon running on the home is then told with
// SIGHUP, and re-reads its tokens (closing the websockets of removed ones
// with 4401). The nodes of a cluster need no telling: a new token is
// looked up in the store at its first use, and a removal is among the
// store's changes, which every node applies within a second
// (hub/cluster_changes.go). A daemon on the home's SQLite file is the
// exception: it holds the file for itself while it runs (db/walvfs), so
// the command asks it instead, through /v1/tokens (tokenStore).

func newTokensCmd(g *globals) *cobra.Command {
	var dbURL string
	cmd := &cobra.Command{
		Use:   "tokens",
		Short: "manage owner tokens of a team server (add, list, remove)",
	}
	cmd.PersistentFlags().StringVar(&dbURL, "db", "", "the store: a postgres:// URL (default: database_url in config.toml, else the home's SQLite file), as albedo daemon --db")
	cmd.AddCommand(newTokensAddCmd(g, &dbURL), newTokensListCmd(g, &dbURL), newTokensRemoveCmd(g, &dbURL))
	return cmd
}

func newTokensAddCmd(g *globals, dbURL *string) *cobra.Command {
	var role string
	cmd := &cobra.Command{
		Use:   "add --role owner NAME",
		Short: "make an owner token; it is printed once and stored only as a hash",
		Long: "Make a token named NAME that acts as the owner (everything the daemon.json token may do),\n" +
			"for a team server's people and tools. It is printed once on standard output; only its\n" +
			"SHA-256 is stored. NAME is 1-64 of a-z 0-9 . _ -, starting with a letter or digit, and\n" +
			"unique among owner tokens. A daemon running on the home's SQLite file makes it (through\n" +
			"its API); one on PostgreSQL is told at once (SIGHUP); the nodes of a cluster\n" +
			"(--db postgres://…) accept it at its first use.\n\n" +
			"--role is required, and only owner is made here: bot tokens come from albedo bots add,\n" +
			"viewer tokens from albedo share.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch role {
			case string(wire.TokenOwner):
			case "":
				return usageErrorf("--role is required: albedo tokens add --role owner %s", args[0])
			case string(wire.TokenBot):
				return usageErrorf("--role bot: bot tokens are made with albedo bots add %s", args[0])
			case string(wire.TokenViewer):
				return usageErrorf("--role viewer: viewer tokens are made with albedo share SESSION")
			default:
				return usageErrorf("--role %q: only owner tokens are made here", role)
			}
			return g.withTokens(cmd.Context(), *dbURL, func(ctx context.Context, ts tokenStore) error {
				tok, err := ts.add(ctx, args[0])
				switch client.Code(err) {
				case wire.CodeConflict:
					return fmt.Errorf("an owner token named %q exists (albedo tokens remove %s, then add it again, makes a new one)", args[0], args[0])
				case wire.CodeBadRequest:
					return usageErrorf("%s: %s", args[0], errMessage(err))
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stderr, "owner token %q: keep it, it is not shown again\n", args[0])
				fmt.Fprintln(g.stdout, tok)
				g.told(ts)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "the token's role: owner")
	return cmd
}

func newTokensListCmd(g *globals, dbURL *string) *cobra.Command {
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list stored tokens (owners, bots, viewers): role, name, sessions, when made; never the tokens",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withTokens(cmd.Context(), *dbURL, func(ctx context.Context, store tokenStore) error {
				ts, err := store.list(ctx)
				if err != nil {
					return err
				}
				if *asJSON {
					return printJSONList(g.stdout, ts)
				}
				if len(ts) == 0 {
					printf(g.stdout, "no tokens yet: albedo tokens add --role owner NAME\n")
					return nil
				}
				tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ROLE\tNAME\tSESSIONS\tCREATED")
				for _, t := range ts {
					s := strings.Join(t.Sessions, ",")
					if s == "" {
						s = "all"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Role, t.Name, s, humanTime(t.CreatedAt))
				}
				return tw.Flush()
			})
		},
	}
	asJSON = jsonFlag(cmd)
	return cmd
}

func newTokensRemoveCmd(g *globals, dbURL *string) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "revoke an owner token; every daemon on the store closes its websockets with 4401",
		Long: "Revoke the owner token named NAME. A daemon running on the home revokes it at once\n" +
			"(through its API on SQLite, told with SIGHUP on PostgreSQL); every node of a cluster\n" +
			"(--db postgres://…) refuses the token within a second or two, and closes its websockets\n" +
			"with 4401, with NATS or without.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withTokens(cmd.Context(), *dbURL, func(ctx context.Context, ts tokenStore) error {
				err := ts.remove(ctx, args[0])
				if client.Code(err) == wire.CodeNotFound {
					return &exitError{code: exitNotFound, err: fmt.Errorf("no owner token named %q (albedo tokens list lists them)", args[0])}
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "owner token %q removed\n", args[0])
				g.told(ts)
				return nil
			})
		},
	}
}

// tokenStore is where a tokens command reads and writes owner tokens: the
// daemon that holds the home's SQLite file, through its API, or else the
// store itself.
type tokenStore struct {
	c      *client.Client     // the home's daemon; nil: the store, through h
	listed []client.TokenInfo // with c: the daemon's list, as withTokens asked for it
	h      *hub.Hub
	home   string
}

// withTokens runs fn on the tokens of the home's store: through the
// daemon running on it if the store is the home's SQLite file, which no
// other process may open while that daemon runs; else opened here
// (withStore).
func (g *globals) withTokens(ctx context.Context, dbURL string, fn func(ctx context.Context, ts tokenStore) error) error {
	home, target, err := g.homeStore(dbURL)
	if err != nil {
		return err
	}
	if _, held := sqliteHeld(home, target); held {
		// The home's own daemon, whatever --url or $ALBEDO_URL name: the
		// store is this home's.
		c, err := client.New(client.Options{Home: home, Token: g.token, Name: "albedo-cli/1"})
		if err != nil {
			return err
		}
		// A daemon of a build before /v1/tokens answers 404 for the
		// route, which must not read as "no such token".
		listed, err := c.Tokens(ctx)
		if client.Code(err) == wire.CodeNotFound {
			return fmt.Errorf("the daemon running on %s predates albedo tokens through its API (/v1/tokens), and holds the home's SQLite file: albedo stop, then run this again", home)
		} else if err != nil {
			return err
		}
		return fn(ctx, tokenStore{c: c, listed: listed, home: home})
	}
	return g.withStore(ctx, target, func(ctx context.Context, h *hub.Hub) error {
		return fn(ctx, tokenStore{h: h, home: home})
	})
}

// sqliteHeld says whether a daemon runs on home with target, the home's
// SQLite file, which it then holds for itself (db/walvfs): no other
// process may open it meanwhile. The daemon's pid if so.
func sqliteHeld(home, target string) (pid int, held bool) {
	if db.IsPostgres(target) {
		return 0, false
	}
	return client.LockHolder(home)
}

func (ts tokenStore) add(ctx context.Context, name string) (string, error) {
	if ts.c != nil {
		return ts.c.AddOwnerToken(ctx, name)
	}
	return ts.h.AddOwner(ctx, name)
}

func (ts tokenStore) list(ctx context.Context) ([]client.TokenInfo, error) {
	if ts.c != nil {
		return ts.listed, nil // read a moment before, to know the daemon has the route
	}
	infos, err := ts.h.Tokens(ctx)
	out := make([]client.TokenInfo, 0, len(infos))
	for _, t := range infos {
		out = append(out, client.TokenInfo(t))
	}
	return out, err
}

func (ts tokenStore) remove(ctx context.Context, name string) error {
	if ts.c != nil {
		return ts.c.RemoveOwnerToken(ctx, name)
	}
	_, err := ts.h.RemoveOwner(ctx, name)
	return err
}

// told tells the home's daemon of a change made in the store (tellDaemon);
// one made through it needs no telling.
func (g *globals) told(ts tokenStore) {
	if ts.c == nil {
		g.tellDaemon(ts.home)
	}
}

// errMessage is what a refusal says, without its code and status.
func errMessage(err error) string {
	if m := client.Message(err); m != "" {
		return m
	}
	return err.Error()
}

// withStore opens the store target (the home's, as homeStore resolves it)
// and runs fn on it.
func (g *globals) withStore(ctx context.Context, target string, fn func(ctx context.Context, h *hub.Hub) error) error {
	log := slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, err := hub.Open(ctx, target, hub.Options{Node: "albedo-tokens"}, log)
	if err != nil {
		return err
	}
	err = fn(ctx, h)
	if cerr := h.Close(context.WithoutCancel(ctx)); err == nil {
		err = cerr
	}
	return err
}

// tellDaemon sends SIGHUP to the daemon running on home, if any, so that it
// re-reads its tokens, and says what it did.
func (g *globals) tellDaemon(home string) {
	pid, held := client.LockHolder(home)
	if !held {
		fmt.Fprintf(g.stderr, "no daemon runs on %s; the next to start reads the tokens\n", home)
		return
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		fmt.Fprintf(g.stderr, "could not tell the daemon (pid %d) to re-read its tokens: %v; send it SIGHUP\n", pid, err)
		return
	}
	fmt.Fprintf(g.stderr, "told the daemon (pid %d) to re-read its tokens\n", pid)
}
