DROP INDEX usage_session;
