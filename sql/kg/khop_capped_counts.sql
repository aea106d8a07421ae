-- Per query, how many expanded nodes (distance < $hops) had more than $cap distinct neighbours and were sampled.
SELECT r.qid, count(*) AS capped
FROM _khop_reached AS r
JOIN (SELECT DISTINCT node, degree FROM _khop_choice) AS c ON c.node = r.node
WHERE r.depth < $hops AND c.degree > $cap
GROUP BY r.qid
