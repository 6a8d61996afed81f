-- A session's usage, for its totals in GET /v1/sessions/{id} (the
-- terminal's and the page's cost so far).
CREATE INDEX usage_session ON usage (session);
