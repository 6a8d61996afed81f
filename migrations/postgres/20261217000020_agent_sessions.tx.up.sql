-- Coding agents' sessions (db/agents.go): for a session whose provider is
-- an acp profile, the agent's own session id its last process held, so
-- that the next process resumes it (session/load) where the agent can;
-- and what the agent is to be told at its next prompt (a turn it lost
-- when the daemon stopped). A fork starts its agent anew.
CREATE TABLE agent_sessions (
    session       TEXT NOT NULL PRIMARY KEY,
    profile       TEXT NOT NULL,
    agent_session TEXT NOT NULL,
    note          TEXT NOT NULL
);
