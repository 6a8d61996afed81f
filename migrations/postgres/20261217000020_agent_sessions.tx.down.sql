DROP TABLE agent_sessions;
