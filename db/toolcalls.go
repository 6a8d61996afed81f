package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"albedo/wire"
)

// A tool call's row (migration tool_calls) is written with its tool_call
// event, and changed by its decision and its result. The events are the
// record; the rows let the turn runner find, without walking the log,
// the calls that wait for a person, those with no result yet, and what
// to send the model again when a turn resumes after a restart.

// ToolCall is one call's row.
type ToolCall struct {
	Session, CallID, TurnID string
	Seq                     int    // its place among the turn's calls
	Step                    int    // the model's response that made it, from 0
	StepText                string // what the model said before its calls, on a step's first call
	Tool                    string // the full name, or the model's name for a tool not offered
	Arguments               string // a JSON object, or "" when the model's were no object
	Policy                  string // allow, ask or deny
	Offset                  int64  // of its tool_call event
	RequestedAt, ExpiresAt  time.Time
	Decision                string // "" while it waits for one; the policy's, a person's, expired, cancelled
	DecidedBy               string // the person's author id; "" for the policy's
	Started                 bool   // it began to run: a restart cannot know whether it acted
	State, Output, Error    string // its result: State "" until then
	// StepUsage is what the response that made it cost, on a step's first
	// call (nil: none reported).
	StepUsage *wire.Usage
}

// ErrDecided refuses a decision on a call that has one.
var ErrDecided = errors.New("the call was decided already")

const toolCallCols = `session, call_id, turn_id, seq, step, step_text, tool, arguments, policy, call_offset,
	requested_at, expires_at, decision, decided_by, started, state, output, error, step_usage`

// AddToolCall writes a call's row, in the transaction of its tool_call
// event. A call whose policy decided it (allow, deny) has that decision.
func (t *Tx) AddToolCall(ctx context.Context, c ToolCall) error {
	var decision *string
	if c.Decision != "" {
		decision = &c.Decision
	}
	usage := ""
	if c.StepUsage != nil {
		js, err := json.Marshal(c.StepUsage)
		if err != nil {
			return fmt.Errorf("add tool call: %w", err)
		}
		usage = string(js)
	}
	_, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO tool_calls (`+toolCallCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		c.Session, c.CallID, c.TurnID, c.Seq, c.Step, c.StepText, c.Tool, c.Arguments, c.Policy, c.Offset,
		formatTime(c.RequestedAt), formatTime(c.ExpiresAt), decision, c.DecidedBy, started(c.Started), c.State, c.Output, c.Error, usage)
	if err != nil {
		return fmt.Errorf("add tool call: %w", err)
	}
	return nil
}

// AskToolCall makes a call that runs, and has no result, one that asks:
// a coding agent's call announced as running, whose agent then asks for
// permission. Its policy and decision are the policy's now (decision ""
// waits for a person, until expires); ErrDecided when it has ended.
func (t *Tx) AskToolCall(ctx context.Context, session, callID, policy, decision string, requested, expires time.Time) error {
	var d *string
	if decision != "" {
		d = &decision
	}
	res, err := t.sql.ExecContext(ctx, t.bind(`UPDATE tool_calls SET policy = ?, decision = ?, decided_by = '', requested_at = ?, expires_at = ?
		WHERE session = ? AND call_id = ? AND state = ''`), policy, d, formatTime(requested), formatTime(expires), session, callID)
	if err != nil {
		return fmt.Errorf("ask tool call: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrDecided
	}
	return nil
}

// DecideToolCall records the decision on a call that waits for one: the
// first decision wins, wherever it is made (a conditional update), and a
// later one is ErrDecided; ErrNotFound for no such call. It returns the
// call as it was before the decision.
func (t *Tx) DecideToolCall(ctx context.Context, session, callID, decision, by string) (ToolCall, error) {
	c, err := scanToolCall(t.sql.QueryRowContext(ctx, t.bind(`SELECT `+toolCallCols+` FROM tool_calls WHERE session = ? AND call_id = ?`), session, callID))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("call %q: %w", callID, ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("read tool call: %w", err)
	}
	res, err := t.sql.ExecContext(ctx, t.bind(`UPDATE tool_calls SET decision = ?, decided_by = ? WHERE session = ? AND call_id = ? AND decision IS NULL`),
		decision, by, session, callID)
	if err != nil {
		return c, fmt.Errorf("decide tool call: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return c, ErrDecided
	}
	return c, nil
}

// EndToolCall records a call's result, once: ErrDecided when it has one.
func (t *Tx) EndToolCall(ctx context.Context, session, callID, state, output, errText string) error {
	res, err := t.sql.ExecContext(ctx, t.bind(`UPDATE tool_calls SET state = ?, output = ?, error = ? WHERE session = ? AND call_id = ? AND state = ''`),
		state, output, errText, session, callID)
	if err != nil {
		return fmt.Errorf("end tool call: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrDecided
	}
	return nil
}

func started(b bool) int {
	if b {
		return 1
	}
	return 0
}

// StartToolCall marks a call as begun, before it runs.
func (t *Tx) StartToolCall(ctx context.Context, session, callID string) error {
	if _, err := t.sql.ExecContext(ctx, t.bind(`UPDATE tool_calls SET started = 1 WHERE session = ? AND call_id = ?`), session, callID); err != nil {
		return fmt.Errorf("start tool call: %w", err)
	}
	return nil
}

// AllowTool allows tool without asking for the rest of session.
func (t *Tx) AllowTool(ctx context.Context, session, tool string) error {
	_, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO session_tools (session, tool) VALUES (?, ?) ON CONFLICT DO NOTHING`), session, tool)
	if err != nil {
		return fmt.Errorf("allow tool: %w", err)
	}
	return nil
}

// forkTools gives a fork its parent's tools allowed for the session.
func (t *Tx) forkTools(ctx context.Context, parent, child string) error {
	_, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO session_tools (session, tool) SELECT ?, tool FROM session_tools WHERE session = ?`), child, parent)
	if err != nil {
		return fmt.Errorf("fork allowed tools: %w", err)
	}
	return nil
}

// deleteToolCalls removes a deleted session's calls and allowed tools.
func (t *Tx) deleteToolCalls(ctx context.Context, session string) error {
	for _, q := range []string{`DELETE FROM tool_calls WHERE session = ?`, `DELETE FROM session_tools WHERE session = ?`} {
		if _, err := t.sql.ExecContext(ctx, t.bind(q), session); err != nil {
			return fmt.Errorf("delete tool calls: %w", err)
		}
	}
	return nil
}

// MaxTurnCalls bounds the rows ToolCallsOfTurn reads: more than any turn
// may make.
const MaxTurnCalls = 1024

// ToolCallsOfTurn returns a turn's calls in the order the model made
// them.
func (d *DB) ToolCallsOfTurn(ctx context.Context, session, turn string) ([]ToolCall, error) {
	return d.toolCalls(ctx, `WHERE session = ? AND turn_id = ? ORDER BY seq LIMIT ?`, session, turn, MaxTurnCalls)
}

// PendingToolCalls returns the calls of a session that wait for a
// decision, oldest first, at most limit.
func (d *DB) PendingToolCalls(ctx context.Context, session string, limit int) ([]ToolCall, error) {
	return d.toolCalls(ctx, `WHERE session = ? AND decision IS NULL ORDER BY call_offset LIMIT ?`, session, limit)
}

// ToolCall returns one call, or ErrNotFound.
func (d *DB) ToolCall(ctx context.Context, session, callID string) (ToolCall, error) {
	cs, err := d.toolCalls(ctx, `WHERE session = ? AND call_id = ?`, session, callID)
	if err == nil && len(cs) == 0 {
		err = fmt.Errorf("call %q: %w", callID, ErrNotFound)
	}
	if err != nil {
		return ToolCall{}, err
	}
	return cs[0], nil
}

// OpenToolTurns returns the turns, by session, that have a call with no
// result: what a restart resumes rather than closes.
func (d *DB) OpenToolTurns(ctx context.Context) (map[string]map[string]bool, error) {
	rows, err := d.ro.DB.QueryContext(ctx, `SELECT DISTINCT session, turn_id FROM tool_calls WHERE state = ''`)
	if err != nil {
		return nil, fmt.Errorf("open tool turns: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]bool{}
	for rows.Next() {
		var s, turn string
		if err := rows.Scan(&s, &turn); err != nil {
			return nil, fmt.Errorf("open tool turns: %w", err)
		}
		if out[s] == nil {
			out[s] = map[string]bool{}
		}
		out[s][turn] = true
	}
	return out, rows.Err()
}

// OpenToolTurn says whether a turn has a call with no result.
func (d *DB) OpenToolTurn(ctx context.Context, session, turn string) (bool, error) {
	var n int
	err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(`SELECT count(*) FROM tool_calls WHERE session = ? AND turn_id = ? AND state = ''`), session, turn).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("open tool turn: %w", err)
	}
	return n > 0, nil
}

// AllowedTools returns the tools allowed for the rest of a session.
func (d *DB) AllowedTools(ctx context.Context, session string) (map[string]bool, error) {
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(`SELECT tool FROM session_tools WHERE session = ? LIMIT 10000`), session)
	if err != nil {
		return nil, fmt.Errorf("allowed tools: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var tool string
		if err := rows.Scan(&tool); err != nil {
			return nil, fmt.Errorf("allowed tools: %w", err)
		}
		out[tool] = true
	}
	return out, rows.Err()
}

func (d *DB) toolCalls(ctx context.Context, where string, args ...any) ([]ToolCall, error) {
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(`SELECT `+toolCallCols+` FROM tool_calls `+where), args...)
	if err != nil {
		return nil, fmt.Errorf("tool calls: %w", err)
	}
	defer rows.Close()
	var out []ToolCall
	for rows.Next() {
		c, err := scanToolCall(rows)
		if err != nil {
			return nil, fmt.Errorf("tool calls: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func scanToolCall(r interface{ Scan(...any) error }) (ToolCall, error) {
	var c ToolCall
	var req, exp string
	var decision sql.NullString
	var started int
	var usage string
	err := r.Scan(&c.Session, &c.CallID, &c.TurnID, &c.Seq, &c.Step, &c.StepText, &c.Tool, &c.Arguments, &c.Policy, &c.Offset,
		&req, &exp, &decision, &c.DecidedBy, &started, &c.State, &c.Output, &c.Error, &usage)
	c.Started = started != 0
	c.RequestedAt, c.ExpiresAt, c.Decision = parseTime(req), parseTime(exp), decision.String
	if err == nil && usage != "" {
		c.StepUsage = new(wire.Usage)
		if err = json.Unmarshal([]byte(usage), c.StepUsage); err != nil {
			err = fmt.Errorf("the usage of call %s: %w", c.CallID, err)
		}
	}
	return c, err
}
