DROP TABLE tokens;

--bun:split

DROP TABLE inputs;

--bun:split

DROP TABLE events;

--bun:split

DROP TABLE sessions;
