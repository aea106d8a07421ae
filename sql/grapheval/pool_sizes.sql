-- GraphEval: the number of members of each pool.
CREATE OR REPLACE TEMP TABLE _ge_pool_size AS SELECT pool, count(*) AS n FROM _ge_pool GROUP BY pool
