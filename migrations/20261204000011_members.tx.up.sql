-- Members: the named people of a home or server. Their personal tokens are
-- rows of tokens with kind 'member', the member's id in member and a label
-- naming the device or link it was made for. A link to one session (kind
-- 'viewer' to read, 'guest' to write) has a label too, unique in its
-- session, and may expire; last_used says when it was last used.
CREATE TABLE members (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    admin      INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

--bun:split

-- A member's access to a session they did not make: 'read' or 'write';
-- 'creator' marks the member who made it. Removed with the session or the
-- member, by the statements that remove those (no foreign key: the fold
-- rewrites session rows with foreign keys off).
CREATE TABLE grants (
    session    TEXT NOT NULL,
    member     TEXT NOT NULL,
    access     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session, member)
) WITHOUT ROWID;

--bun:split

CREATE INDEX grants_member ON grants (member);

--bun:split

ALTER TABLE tokens ADD COLUMN member TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE tokens ADD COLUMN label TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE tokens ADD COLUMN expires_at TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE tokens ADD COLUMN last_used TEXT NOT NULL DEFAULT '';
