package api

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"

	"albedo/api/ws"
	"albedo/hub/access"
	"albedo/wire"
)

// Routes for members and their access to sessions; their shape is in
// docs/protocol.md, "Members and grants".

func (s *Server) listMembers(c echo.Context) error {
	ms, err := s.hub.Members(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"members": ms})
}

func (s *Server) addMember(c echo.Context) error {
	var req wire.MemberCreate
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	tok, m, err := s.hub.AddMember(c.Request().Context(), req.Name, req.Admin)
	if err != nil {
		return err
	}
	noStore(c)
	return c.JSON(http.StatusCreated, wire.MemberCreated{Name: m.Name, Admin: m.Admin, Token: tok, URL: pageURL(c.Request(), tok)})
}

func (s *Server) removeMember(c echo.Context) error {
	id, tokens, err := s.hub.RemoveMember(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	s.ws.CloseTokens(tokens, ws.StatusBadToken, "token revoked: the member was removed")
	s.ws.CloseMember(id, ws.StatusBadToken, "the member was removed")
	return c.NoContent(http.StatusNoContent)
}

// renameMember gives a member another name: their connections connect
// again, to act under it.
func (s *Server) renameMember(c echo.Context) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	m, err := s.hub.RenameMember(c.Request().Context(), c.Param("name"), req.Name)
	if err != nil {
		return err
	}
	s.ownerMu.Lock()
	if s.owner.MemberID == m.ID {
		s.owner.Name = m.Name
	}
	s.ownerMu.Unlock()
	s.ws.CloseMember(m.ID, websocket.StatusPolicyViolation, "your name changed; connect again")
	return c.JSON(http.StatusOK, m)
}

// ownerP is who daemon.json's token acts as.
func (s *Server) ownerP() access.Principal {
	s.ownerMu.RLock()
	defer s.ownerMu.RUnlock()
	return s.owner
}

// myToken makes a personal token of the caller's member (albedo open's,
// one per browser).
func (s *Server) myToken(c echo.Context) error {
	var req struct {
		Label string `json:"label"`
	}
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	p, _ := principalOf(c)
	tok, old, err := s.hub.MemberToken(c.Request().Context(), p, req.Label)
	if err != nil {
		return err
	}
	s.ws.CloseTokens(old, ws.StatusBadToken, "token replaced")
	noStore(c)
	return c.JSON(http.StatusCreated, map[string]string{"name": p.Name, "label": req.Label, "token": tok, "url": pageURL(c.Request(), tok)})
}

func (s *Server) listGrants(c echo.Context) error {
	gs, err := s.hub.Grants(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"grants": gs})
}

func (s *Server) putGrant(c echo.Context) error {
	var req wire.GrantPut
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	if err := s.hub.Grant(c.Request().Context(), c.Param("id"), c.Param("member"), req.Access); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) deleteGrant(c echo.Context) error {
	if err := s.hub.Ungrant(c.Request().Context(), c.Param("id"), c.Param("member")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// pageURL is the link that opens the page with token, on the address the
// request came to: the token in the #fragment, which a browser never sends.
func pageURL(r *http.Request, token string) string {
	base := strings.TrimSuffix(strings.Replace(wsURL(r), "ws", "http", 1), "/v1/ws")
	return base + "/#" + url.Values{"token": {token}}.Encode()
}
