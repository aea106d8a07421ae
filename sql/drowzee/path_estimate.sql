-- The two-step paths first(a, b), second(b, c) counted by aggregate, without enumerating them: the sum over middle
-- entities b of first's in-degree times second's out-degree (an upper bound on the distinct (a, c) pairs: it counts
-- a = c and parallel middles too). Linear in the two relations' triples, however skewed their degrees.
WITH f AS (SELECT tail AS m, count(*) AS n FROM triples WHERE relation = (SELECT id FROM relations WHERE key = $first)
           GROUP BY tail),
s AS (SELECT head AS m, count(*) AS n FROM triples WHERE relation = (SELECT id FROM relations WHERE key = $second)
      GROUP BY head)
SELECT coalesce(sum(f.n * s.n), 0)::HUGEINT FROM f JOIN s ON s.m = f.m
