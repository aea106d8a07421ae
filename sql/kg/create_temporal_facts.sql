-- Dated facts in whole years. NULL = unknown; ongoing = still true (source end year 3000). tail is NULL for events.
CREATE TABLE IF NOT EXISTS temporal_facts (head BIGINT NOT NULL, relation BIGINT NOT NULL, tail BIGINT, start_year INTEGER, end_year INTEGER, ongoing BOOLEAN NOT NULL DEFAULT false)
