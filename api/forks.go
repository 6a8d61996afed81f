package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"albedo/wire"
)

// fork makes a fork of a session (POST /v1/sessions/{id}/fork): 201 with
// the new session, its creator the caller.
func (s *Server) fork(c echo.Context) error {
	var body struct {
		wire.ForkRequest
		At *int64 `json:"at"` // required: {} is no fork at 0
	}
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	if body.At == nil {
		return wire.Errorf(wire.CodeBadRequest, "at is required: the offset of the parent's last event in the fork (0 for none)")
	}
	req := body.ForkRequest
	req.At = *body.At
	p, _ := principalOf(c)
	sess, err := s.hub.Fork(c.Request().Context(), p, c.Param("id"), req)
	if err != nil {
		return err
	}
	sess.Access = p.Access(sess.ID)
	c.Response().Header().Set("ETag", sess.ETag)
	c.Response().Header().Set("Location", "/v1/sessions/"+sess.ID)
	return c.JSON(http.StatusCreated, sess)
}

// forks lists a session's forks that the caller may read.
func (s *Server) forks(c echo.Context) error {
	p, _ := principalOf(c)
	list, err := s.hub.Forks(c.Request().Context(), p, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ForkList{Forks: list})
}
