ALTER TABLE tool_calls DROP COLUMN step_usage;
