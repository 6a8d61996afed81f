package client

import (
	"context"
	"net/http"
	"net/url"

	"albedo/wire"
)

// AddMember adds a member (admins only) and returns their first token,
// once, with the link that opens the page as them.
func (c *Client) AddMember(ctx context.Context, name string, admin bool) (wire.MemberCreated, error) {
	var out wire.MemberCreated
	_, err := c.call(ctx, http.MethodPost, "/v1/members", nil, wire.MemberCreate{Name: name, Admin: admin}, &out, false)
	return out, err
}

// Members lists the members (admins only).
func (c *Client) Members(ctx context.Context) ([]wire.Member, error) {
	var out struct {
		Members []wire.Member `json:"members"`
	}
	_, err := c.call(ctx, http.MethodGet, "/v1/members", nil, nil, &out, true)
	return out.Members, err
}

// RemoveMember removes a member: their tokens are refused and their
// connections closed with 4401.
func (c *Client) RemoveMember(ctx context.Context, name string) error {
	_, err := c.call(ctx, http.MethodDelete, "/v1/members/"+url.PathEscape(name), nil, nil, nil, false)
	return err
}

// RenameMember gives the member named name the name to (admins only).
func (c *Client) RenameMember(ctx context.Context, name, to string) (wire.Member, error) {
	var out wire.Member
	body := struct {
		Name string `json:"name"`
	}{to}
	_, err := c.call(ctx, http.MethodPatch, "/v1/members/"+url.PathEscape(name), nil, body, &out, false)
	return out, err
}

// Grant gives a member read or write access to a session.
func (c *Client) Grant(ctx context.Context, session, member string, access wire.Access) error {
	_, err := c.call(ctx, http.MethodPut, sessPath(session)+"/grants/"+url.PathEscape(member), nil, wire.GrantPut{Access: access}, nil, true)
	return err
}

// Ungrant takes a member's access to a session back.
func (c *Client) Ungrant(ctx context.Context, session, member string) error {
	_, err := c.call(ctx, http.MethodDelete, sessPath(session)+"/grants/"+url.PathEscape(member), nil, nil, nil, true)
	return err
}

// Grants lists who has access to a session.
func (c *Client) Grants(ctx context.Context, session string) ([]wire.Grant, error) {
	var out struct {
		Grants []wire.Grant `json:"grants"`
	}
	_, err := c.call(ctx, http.MethodGet, sessPath(session)+"/grants", nil, nil, &out, true)
	return out.Grants, err
}

// MyToken makes a personal token of the caller's member, labelled label
// (the browser or device it is for), replacing one of the same label.
func (c *Client) MyToken(ctx context.Context, label string) (string, error) {
	var out struct {
		Token string `json:"token"`
	}
	_, err := c.call(ctx, http.MethodPost, "/v1/me/tokens", nil, map[string]string{"label": label}, &out, false)
	return out.Token, err
}
