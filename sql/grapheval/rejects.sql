-- GraphEval: every rejected negative candidate (reason and attempt), and every slot left without a negative after
-- the last attempt (reason exhausted).
SELECT 'negative' AS kind, x.reason, x.part, h.key AS head_key, r.key AS relation_key, t.key AS tail_key, x.text,
       x.attempt, ph.key AS positive_head_key, pr.key AS positive_relation_key, pt.key AS positive_tail_key
FROM (SELECT * FROM _ge_rej
      UNION ALL SELECT ph, pr, pt, j, NULL, NULL, NULL, NULL, NULL, NULL, 'exhausted' FROM _ge_cand
      WHERE reason IS NOT NULL) x
LEFT JOIN _ge_ent h ON h.id = x.head LEFT JOIN relations r ON r.id = x.relation LEFT JOIN _ge_ent t ON t.id = x.tail
JOIN _ge_ent ph ON ph.id = x.ph JOIN relations pr ON pr.id = x.pr JOIN _ge_ent pt ON pt.id = x.pt
ORDER BY x.pr, x.ph, x.pt, x.j, x.attempt
