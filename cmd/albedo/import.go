package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

// importChunkBytes bounds the JSON of one import request's events, under
// the daemon's 2 MiB body limit; a chunk also holds at most
// wire.MaxImportEvents events.
const importChunkBytes = 1 << 20

func newImportCmd(g *globals) *cobra.Command {
	var blobs, title string
	cmd := &cobra.Command{
		Use:   "import FILE [--blobs DIR] [--title T]",
		Short: "restore a session from albedo export --format json, under a new id; prints the id on the last line",
		Long: "Restore a session from the JSON of albedo export --format json (FILE, or - for standard input):\n" +
			"a new session, with the title, workspace, model, effort and system text it had, and every event as it was:\n" +
			"its offset, type, author, text and time. Nothing runs: no turn starts, no input is queued. The\n" +
			"events are read and sent a chunk at a time, so a file of any size takes bounded memory. A provider\n" +
			"this daemon does not have is left out (its default answers), with a warning. The files its\n" +
			"messages carry are uploaded first from --blobs DIR (albedo export --blobs), by default\n" +
			"FILE.blobs beside FILE (FILE without .json); a file the daemon holds already need not be\n" +
			"there. A title a session you can see has already is made \"TITLE (imported)\" (or \"(imported 2)\",\n" +
			"and so on); --title gives the new session that title instead. Admins only.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			given := cmd.Flags().Changed("title")
			if err := checkSettings(wire.SessionPatch{Title: &title}); given && err != nil {
				return err
			}
			c, err := g.client(ctx)
			if err != nil {
				return err
			}
			retitle := func(t string) (string, error) {
				if given {
					return title, nil
				}
				return importedTitle(ctx, c, t)
			}
			var in io.Reader = os.Stdin
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
				if beside := strings.TrimSuffix(args[0], ".json") + ".blobs"; blobs == "" {
					if st, err := os.Stat(beside); err == nil && st.IsDir() {
						blobs = beside
					}
				}
			}
			s, n, err := importExport(ctx, g, c, bufio.NewReader(in), blobs, retitle)
			if err != nil {
				return err
			}
			printf(g.stdout, "imported %d events into a new session\n%s\n", n, s)
			return nil
		},
	}
	cmd.Flags().StringVar(&blobs, "blobs", "", "upload the files the export's messages carry from this directory (albedo export --blobs)")
	cmd.Flags().StringVar(&title, "title", "", "the new session's title (default: the export's, marked (imported) when a session you can see has it)")
	return cmd
}

// importExport reads an export ({"session": …, "events": […]}) token by
// token, makes the session when its object has been read, and sends the
// events in chunks as they come.
func importExport(ctx context.Context, g *globals, c *client.Client, r io.Reader, blobs string, retitle func(string) (string, error)) (id string, n int, _ error) {
	sent := map[string]bool{} // the blobs uploaded
	dec := json.NewDecoder(r)
	bad := func(what string, err error) error {
		return usageErrorf("not an export of albedo export --format json: %s: %v", what, err)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", 0, bad("it does not start with {", err)
	}
	var chunk []wire.Event
	size := 0
	flush := func(last bool) error {
		if len(chunk) == 0 {
			return nil
		}
		if _, err := c.ImportEvents(ctx, id, chunk, last); err != nil {
			return err
		}
		n += len(chunk)
		chunk, size = chunk[:0], 0
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return id, n, bad("a key", err)
		}
		switch key {
		case "session":
			var s wire.Session
			if err := dec.Decode(&s); err != nil {
				return id, n, bad("session", err)
			}
			if s.Title, err = retitle(s.Title); err != nil {
				return "", 0, err
			}
			if id, err = newImportedSession(ctx, g, c, s); err != nil {
				return "", 0, err
			}
		case "events":
			if id == "" {
				return "", 0, bad("events", fmt.Errorf("they come before the session"))
			}
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return id, n, bad("events", fmt.Errorf("not a list"))
			}
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return id, n, bad("an event", err)
				}
				var ev wire.Event
				if err := json.Unmarshal(raw, &ev); err != nil {
					return id, n, bad("an event", err)
				}
				if err := importBlobs(ctx, c, blobs, ev, sent); err != nil {
					return id, n, err
				}
				if len(chunk) == wire.MaxImportEvents || size+len(raw) > importChunkBytes {
					if err := flush(false); err != nil {
						return id, n, err
					}
				}
				chunk, size = append(chunk, ev), size+len(raw)
			}
			if _, err := dec.Token(); err != nil {
				return id, n, bad("events", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return id, n, bad(fmt.Sprint(key), err)
			}
		}
	}
	if id == "" {
		return "", 0, bad("session", fmt.Errorf("missing"))
	}
	return id, n, flush(true)
}

// newImportedSession makes the session an export restores into: its
// settings as they were, but a provider this daemon lacks.
func newImportedSession(ctx context.Context, g *globals, c *client.Client, s wire.Session) (string, error) {
	req := wire.SessionCreate{Title: s.Title, Workspace: s.Workspace, Provider: s.Provider, Model: s.Model, Effort: s.Effort, System: s.System}
	made, err := c.NewSession(ctx, req)
	if err != nil && req.Provider != "" && client.Code(err) == wire.CodeBadRequest {
		fmt.Fprintf(g.stderr, "albedo import: provider %q: %v; the session takes this daemon's default\n", req.Provider, err)
		req.Provider = ""
		made, err = c.NewSession(ctx, req)
	}
	return made.ID, err
}

// importedTitle is the title of a session imported with title: itself,
// unless a session the caller can see has it already; then
// "TITLE (imported)", else "TITLE (imported 2)" and so on, the first that
// none has, TITLE cut short where the whole would pass the daemon's bound.
func importedTitle(ctx context.Context, c *client.Client, title string) (string, error) {
	if title == "" {
		return "", nil
	}
	ss, err := c.Sessions(ctx)
	if err != nil {
		return "", err
	}
	taken := make(map[string]bool, len(ss))
	for _, s := range ss {
		taken[s.Title] = true
	}
	if !taken[title] {
		return title, nil
	}
	for i := 1; ; i++ {
		mark := " (imported)"
		if i > 1 {
			mark = fmt.Sprintf(" (imported %d)", i)
		}
		if t := cutBytes(title, wire.MaxTitleBytes-len(mark)) + mark; !taken[t] {
			return t, nil
		}
	}
}

// cutBytes is s cut to at most n bytes, at the start of a character.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
