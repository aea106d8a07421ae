-- GraphEval: why each candidate negative (_ge_check: row, head, relation, tail as keys) is not false in the KG, by
-- the checks negatives are drawn with: unknown_key (a key the KG does not have), in_kg, same_label; NULL: verified.
SELECT c."row",
       CASE WHEN h.id IS NULL OR r.id IS NULL OR t.id IS NULL THEN 'unknown_key'
            WHEN k.head IS NOT NULL THEN 'in_kg'
            WHEN l.relation IS NOT NULL THEN 'same_label'
       END AS reason
FROM _ge_check c
LEFT JOIN _ge_ent h ON h.key = c.head LEFT JOIN relations r ON r.key = c.relation LEFT JOIN _ge_ent t ON t.key = c.tail
LEFT JOIN triples k ON k.head = h.id AND k.relation = r.id AND k.tail = t.id
LEFT JOIN _ge_label_triples l ON l.hn = h.norm AND l.relation = r.id AND l.tn = t.norm
ORDER BY c."row"
