-- k-hop BFS state: one row per (query, reached node) with its hop distance; seeds start at depth 0.
-- _khop_seed_rows(qid, node) is an Arrow table registered by kgprobe.graph for the duration of one pass.
CREATE OR REPLACE TEMP TABLE _khop_reached AS
SELECT DISTINCT qid, node, 0 AS depth FROM _khop_seed_rows
