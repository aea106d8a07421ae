-- GraphEval: the positives dropped because another positive statement has the same text (_ge_drop: head, relation,
-- tail ids, in (relation, head, tail) order).
SELECT 'positive' AS kind, 'duplicate_statement' AS reason, NULL AS part, h.key AS head_key, r.key AS relation_key,
       t.key AS tail_key,
       tp.pre || CASE WHEN tp.head_first THEN h.label ELSE t.label END || tp.mid
              || CASE WHEN tp.head_first THEN t.label ELSE h.label END || tp.post AS text,
       NULL::BIGINT AS attempt, h.key AS positive_head_key, r.key AS positive_relation_key,
       t.key AS positive_tail_key
FROM _ge_drop d JOIN _ge_ent h ON h.id = d.head JOIN relations r ON r.id = d.relation JOIN _ge_ent t ON t.id = d.tail
JOIN _ge_templates tp ON tp.relation = d.relation
ORDER BY d.relation, d.head, d.tail
