package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"albedo/hub/access"
	"albedo/wire"
)

// approvals lists a session's calls that wait for a decision (GET
// /v1/sessions/{id}/approvals).
func (s *Server) approvals(c echo.Context) error {
	a, err := s.hub.Approvals(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

// decide records a person's decision on a call (POST
// /v1/sessions/{id}/approvals/{call_id}): 200 with the approval event;
// 409 when it was decided already.
func (s *Server) decide(c echo.Context) error {
	var d wire.Decision
	if err := decodeBody(c, &d); err != nil {
		return err
	}
	p, _ := principalOf(c)
	ev, err := s.hub.Decide(c.Request().Context(), c.Param("id"), c.Param("call_id"), d, p.Author())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ev)
}

// tools lists the tools a session may call, with the policy of each (GET
// /v1/tools?session=ID); without a session, every tool served, which
// only admins may list.
func (s *Server) tools(c echo.Context) error {
	p, _ := principalOf(c)
	session := c.QueryParam("session")
	if session == "" && p.Role != wire.TokenOwner {
		return wire.Errorf(wire.CodeBadRequest, "name a session: ?session=ID")
	}
	if session != "" {
		if err := p.Authorize(access.Rule{Roles: access.People, Need: wire.AccessRead}, "list a session's tools", session); err != nil {
			return err
		}
	}
	t, err := s.hub.Tools(c.Request().Context(), session)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}
