DROP TABLE session_tools;

--bun:split

DROP TABLE tool_calls;
