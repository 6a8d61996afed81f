package acphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"albedo/wire"
)

// The workspace's files, served to the agent (fs/read_text_file,
// fs/write_text_file): inside the workspace only. A path is the
// workspace's when, made relative to it, it stays local; and it is
// opened through an os.Root of the workspace, which refuses a symlink
// that leads out of it. Nothing is read or written otherwise.

// Bounds of the files served.
const (
	maxReadBytes  = 8 << 20
	maxWriteBytes = 8 << 20
)

// errOutside refuses a path that is not the workspace's.
var errOutside = errors.New("the path is outside the session's workspace: the daemon serves the workspace's files only")

// inWorkspace is p relative to the workspace, or why it is not in it.
func (a *agent) inWorkspace(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("the path %q is not absolute", wire.CutUTF8(p, 256))
	}
	rel, err := filepath.Rel(a.workspace, filepath.Clean(p))
	if err != nil || !filepath.IsLocal(rel) {
		return "", errOutside
	}
	return rel, nil
}

// readFile serves a file of the workspace, or its lines from Line
// (1-based) on, at most Limit of them.
func (a *agent) readFile(p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	rel, err := a.inWorkspace(p.Path)
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	b, err := a.readRel(rel, maxReadBytes)
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	content := string(b)
	if (p.Line != nil && *p.Line > 1) || (p.Limit != nil && *p.Limit > 0) {
		lines := strings.SplitAfter(content, "\n")
		start := 0
		if p.Line != nil && *p.Line > 1 {
			start = min(*p.Line-1, len(lines))
		}
		end := len(lines)
		if p.Limit != nil && *p.Limit > 0 && *p.Limit < end-start {
			end = start + *p.Limit
		}
		content = strings.Join(lines[start:end], "")
	}
	return acp.ReadTextFileResponse{Content: content}, nil
}

// readRel reads a workspace file through its root, at most max bytes.
func (a *agent) readRel(rel string, max int64) ([]byte, error) {
	f, err := a.root.Open(rel)
	if err != nil {
		return nil, fileErr(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fileErr(err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("the file is over %d bytes", max)
	}
	return b, nil
}

// fileErr says a file error without the daemon's own paths.
func fileErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if strings.Contains(pe.Err.Error(), "escapes") {
			return errOutside
		}
		return fmt.Errorf("%s: %v", pe.Op, pe.Err)
	}
	return err
}

// writeFile writes a file of the workspace for the agent, as the
// session's policy of acp:fs_write allows (allow when no rule says):
// the write is a call in the log, whose result carries its diff.
func (ts *turnState) writeFile(p acp.WriteTextFileRequest) error {
	a := ts.a
	rel, err := a.inWorkspace(p.Path)
	if err != nil {
		return err
	}
	if len(p.Content) > maxWriteBytes {
		return fmt.Errorf("the content is over %d bytes", maxWriteBytes)
	}
	old, readErr := a.readRel(rel, maxDiffInput)
	if errors.Is(readErr, errOutside) {
		return readErr // through a symlink that leads out
	}
	created := errors.Is(readErr, fs.ErrNotExist) || (readErr != nil && strings.Contains(readErr.Error(), "no such file"))
	var diff string
	switch {
	case readErr == nil || created:
		diff = wire.CutNote(unified(filepath.ToSlash(rel), string(old), p.Content, created), wire.MaxToolDiffBytes, "diff")
	default:
		diff = fmt.Sprintf("--- a/%s\n+++ b/%s\n@@ not shown: %v @@\n", filepath.ToSlash(rel), filepath.ToSlash(rel), readErr)
	}
	args, _ := json.Marshal(map[string]any{"path": filepath.ToSlash(rel), "bytes": len(p.Content)})
	c := Call{Tool: ToolFSWrite, Title: "Write " + filepath.ToSlash(rel), Arguments: args,
		Locations: []wire.ToolLocation{{Path: wire.CutUTF8(p.Path, wire.MaxLocationPathLen)}}, Diff: diff}
	ok, err := ts.daemonCall(&c)
	if err != nil || !ok {
		return err
	}
	bg := context.WithoutCancel(ts.ctx)
	if err := a.root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		err = fileErr(err)
		_ = ts.t.Sink.Result(bg, Result{ID: c.ID, State: wire.ToolFailed, Error: err.Error()})
		return err
	}
	if err := a.root.WriteFile(rel, []byte(p.Content), 0o644); err != nil {
		err = fileErr(err)
		_ = ts.t.Sink.Result(bg, Result{ID: c.ID, State: wire.ToolFailed, Error: err.Error()})
		return err
	}
	// The change made, on the result, as on the call that proposed it:
	// the call's is what people decide on, the result's what the log
	// says was written.
	return ts.t.Sink.Result(bg, Result{ID: c.ID, State: wire.ToolCompleted, Output: fmt.Sprintf("wrote %d bytes to %s", len(p.Content), filepath.ToSlash(rel)), Diff: diff})
}

// daemonCall commits a call the daemon runs for the agent (a write, a
// command), as the policy of its tool says (allow when no rule does),
// and waits for people when it asks. It sets c.ID and returns whether
// the call may run; when it may not, its result is committed and the
// error says why, for the agent.
func (ts *turnState) daemonCall(c *Call) (bool, error) {
	ts.mu.Lock()
	if ts.n >= ts.a.cfg.MaxCalls {
		ts.mu.Unlock()
		ts.overflow()
		return false, fmt.Errorf("the turn has made its %d tool calls (max_tool_calls)", ts.a.cfg.MaxCalls)
	}
	ts.n++
	ts.mu.Unlock()
	c.ID = newID()
	bg := context.WithoutCancel(ts.ctx)
	s := ts.t.Sink
	d, err := s.Propose(bg, *c, wire.PolicyAllow)
	why := ""
	if err == nil && d == "" {
		d, why, err = s.Await(ts.ctx, c.ID)
	}
	switch {
	case err != nil:
		_ = s.Result(bg, Result{ID: c.ID, State: wire.ToolCancelled, Error: "the daemon could not record a decision"})
		return false, err
	case d == wire.DecisionAllow || d == wire.DecisionAllowSession:
		return true, nil
	case d == wire.DecisionDeny:
		if why == "" {
			why = "denied by the daemon's policy"
		}
		_ = s.Result(bg, Result{ID: c.ID, State: wire.ToolDenied, Error: why})
		return false, errors.New("not allowed: " + why)
	}
	return false, fmt.Errorf("not allowed: %s", d) // expired, cancelled: its result is committed
}
