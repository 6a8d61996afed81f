package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"

	"albedo/api/ws"
	"albedo/wire"
)

// decodeBody reads a JSON body into v; an empty body leaves v as it is.
func decodeBody(c echo.Context, v any) error {
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err // BodyLimit's 413 arrives here
	}
	if len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return wire.Errorf(wire.CodeBadRequest, "body: %v", err)
	}
	return nil
}

// listSessions answers a page of the list: a token limited to some
// sessions lists only those, and no page holds more than
// hub.MaxSessionsPage, however many sessions there are.
func (s *Server) listSessions(c echo.Context) error {
	limit, err := queryInt(c, "limit", 100)
	if err != nil {
		return err
	}
	if limit == 0 {
		return wire.Errorf(wire.CodeBadRequest, "limit must be at least 1")
	}
	var archived *bool
	switch v := c.QueryParam("archived"); v {
	case "":
	case "true", "false":
		b := v == "true"
		archived = &b
	default:
		return wire.Errorf(wire.CodeBadRequest, "archived is true or false, not %.32q", v)
	}
	p, _ := principalOf(c)
	ss, next, err := s.hub.SessionsPage(c.Request().Context(), c.QueryParam("after"), limit, p.Sees(), archived)
	if err != nil {
		return err
	}
	for i := range ss {
		ss[i].Access = p.Access(ss[i].ID)
	}
	return c.JSON(http.StatusOK, wire.SessionList{Sessions: ss, Next: next})
}

func (s *Server) createSession(c echo.Context) error {
	var req wire.SessionCreate
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	p, _ := principalOf(c)
	sess, _, err := s.hub.CreateSessionBy(c.Request().Context(), p, "", req)
	if err != nil {
		return err
	}
	sess.Access = p.Access(sess.ID)
	c.Response().Header().Set("ETag", sess.ETag)
	return c.JSON(http.StatusCreated, sess)
}

// putSession creates a session with a client-chosen id. It requires
// If-None-Match: * so that a PUT can never silently replace a session.
func (s *Server) putSession(c echo.Context) error {
	if c.Request().Header.Get("If-None-Match") != "*" {
		return wire.Errorf(wire.CodeEtagRequired, "PUT creates only: send If-None-Match: *")
	}
	var req wire.SessionCreate
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	p, _ := principalOf(c)
	sess, created, err := s.hub.CreateSessionBy(c.Request().Context(), p, c.Param("id"), req)
	if err != nil {
		return err
	}
	sess.Access = p.Access(sess.ID)
	c.Response().Header().Set("ETag", sess.ETag)
	if created {
		return c.JSON(http.StatusCreated, sess)
	}
	return c.JSON(http.StatusOK, sess)
}

func (s *Server) getSession(c echo.Context) error {
	sess, err := s.hub.Session(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	p, _ := principalOf(c)
	sess.Access = p.Access(sess.ID)
	c.Response().Header().Set("ETag", sess.ETag)
	return c.JSON(http.StatusOK, sess)
}

func (s *Server) patchSession(c echo.Context) error {
	etag := c.Request().Header.Get("If-Match")
	if etag == "" {
		return wire.Errorf(wire.CodeEtagRequired, "PATCH needs If-Match with the session's ETag")
	}
	var p wire.SessionPatch
	if err := decodeBody(c, &p); err != nil {
		return err
	}
	pr, _ := principalOf(c)
	if err := s.hub.CheckPatch(c.Request().Context(), pr, c.Param("id"), p); err != nil {
		return err
	}
	sess, err := s.hub.PatchSession(c.Request().Context(), c.Param("id"), etag, p, pr.Name)
	if err != nil {
		return err
	}
	c.Response().Header().Set("ETag", sess.ETag)
	return c.JSON(http.StatusOK, sess)
}

func (s *Server) deleteSession(c echo.Context) error {
	revoked, narrowed, err := s.hub.DeleteSession(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	s.ws.CloseTokens(revoked, ws.StatusBadToken, "token revoked: its session was deleted")
	s.ws.CloseTokens(narrowed, websocket.StatusPolicyViolation, "this token's sessions changed; connect again")
	return c.NoContent(http.StatusNoContent)
}

// queryInt reads an optional non-negative integer query parameter.
func queryInt(c echo.Context, name string, def int64) (int64, error) {
	return parseNonNegative(name, c.QueryParam(name), def)
}

// parseNonNegative reads v, a decimal integer ≥ 0 ("" is def), or says
// what is wrong with it in a bad_request naming the parameter.
func parseNonNegative(name, v string, def int64) (int64, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, wire.Errorf(wire.CodeBadRequest, "%s must be a non-negative integer, not %q", name, v)
	}
	return n, nil
}

func (s *Server) history(c echo.Context) error {
	after, err := queryInt(c, "after", 0)
	if err != nil {
		return err
	}
	before, err := queryInt(c, "before", 0)
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 100)
	if err != nil {
		return err
	}
	if after > 0 && before > 0 {
		return wire.Errorf(wire.CodeBadRequest, "give after or before, not both")
	}
	evs, head, more, err := s.hub.History(c.Request().Context(), c.Param("id"), after, before, int(min(limit, 1000)))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Events []json.RawMessage `json:"events"`
		Head   int64             `json:"head"`
		More   bool              `json:"more"`
	}{evs, head, more})
}

func (s *Server) putInput(c echo.Context) error {
	var in wire.Input
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	pr, _ := principalOf(c)
	atts, err := s.hub.Attachments(c.Request().Context(), pr, in.Attachments)
	if err != nil {
		return err
	}
	r, err := s.hub.PutInput(c.Request().Context(), c.Param("id"), c.Param("input_id"), in.Text, pr.Author(), atts...)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, r)
}

func (s *Server) getInput(c echo.Context) error {
	r, err := s.hub.Input(c.Request().Context(), c.Param("id"), c.Param("input_id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

func (s *Server) interrupt(c echo.Context) error {
	turn, ok, err := s.hub.Interrupt(c.Request().Context(), c.Param("id"), wire.ReasonUser)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.Interrupted{Interrupted: ok, TurnID: turn})
}

// continueTurn serves POST /v1/sessions/{id}/continue: the newest reply,
// cut off, is run on (hub/continue.go).
func (s *Server) continueTurn(c echo.Context) error {
	turn, err := s.hub.Continue(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, wire.Continued{TurnID: turn})
}

func (s *Server) status(c echo.Context) error {
	st, err := s.hub.Status(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}
