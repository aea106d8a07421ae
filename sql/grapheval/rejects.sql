-- GraphEval: every rejected negative candidate (reason and attempt), and every slot left without a negative after
-- the last attempt (reason exhausted, head = relation = tail = -1). _ge_rej: pos, j, attempt, part, head, relation,
-- tail, reason; _ge_pos: pos, head, relation, tail.
SELECT 'negative' AS kind, x.reason, x.part, h.key AS head_key, r.key AS relation_key, t.key AS tail_key,
       CASE WHEN h.id IS NOT NULL THEN
           tp.pre || CASE WHEN tp.head_first THEN h.label ELSE t.label END || tp.mid
                  || CASE WHEN tp.head_first THEN t.label ELSE h.label END || tp.post END AS text,
       x.attempt, ph.key AS positive_head_key, pr.key AS positive_relation_key, pt.key AS positive_tail_key
FROM _ge_rej x JOIN _ge_pos p ON p.pos = x.pos
LEFT JOIN _ge_ent h ON h.id = x.head LEFT JOIN relations r ON r.id = x.relation LEFT JOIN _ge_ent t ON t.id = x.tail
LEFT JOIN _ge_templates tp ON tp.relation = x.relation
JOIN _ge_ent ph ON ph.id = p.head JOIN relations pr ON pr.id = p.relation JOIN _ge_ent pt ON pt.id = p.tail
ORDER BY x.pos, x.j, x.attempt NULLS LAST
