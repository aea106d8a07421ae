-- Every input row that was read but not loaded, with the reason; line is 1-based in the source file.
CREATE TABLE IF NOT EXISTS rejects (source VARCHAR NOT NULL, line BIGINT, raw VARCHAR, reason VARCHAR NOT NULL)
