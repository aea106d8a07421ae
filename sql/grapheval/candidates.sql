-- GraphEval: the candidates of _ge_drawn rendered, and why each is rejected (NULL: accepted).
-- Reasons, first that applies: unchanged (the draw gave back the original), in_kg (a KG triple: closed world),
-- same_label (the surface form of a KG triple: the same statement through a same-named entity), duplicate_text (the
-- text of a positive statement), duplicate_negative (the text of another negative of the same positive).
CREATE OR REPLACE TEMP TABLE _ge_cand AS
WITH rendered AS (
    SELECT d.*, h.norm AS hn, t.norm AS tn,
           tp.pre || CASE WHEN tp.head_first THEN h.label ELSE t.label END || tp.mid
                  || CASE WHEN tp.head_first THEN t.label ELSE h.label END || tp.post AS text
    FROM _ge_drawn d JOIN _ge_ent h ON h.id = d.head JOIN _ge_ent t ON t.id = d.tail
    JOIN _ge_templates tp ON tp.relation = d.relation
), checked AS (
    SELECT r.*,
           CASE WHEN r.head = r.ph AND r.relation = r.pr AND r.tail = r.pt THEN 'unchanged'
                WHEN k.head IS NOT NULL THEN 'in_kg'
                WHEN l.relation IS NOT NULL THEN 'same_label'
                WHEN q.text IS NOT NULL THEN 'duplicate_text'
                WHEN g.text IS NOT NULL THEN 'duplicate_negative'
           END AS reason0
    FROM rendered r
    LEFT JOIN triples k ON k.head = r.head AND k.relation = r.relation AND k.tail = r.tail
    LEFT JOIN _ge_label_triples l ON l.hn = r.hn AND l.relation = r.relation AND l.tn = r.tn
    -- positive texts are unique (_ge_pos), and so are a positive's accepted negative texts: no row is repeated
    LEFT JOIN _ge_pos q ON q.text = r.text
    LEFT JOIN _ge_neg g ON g.ph = r.ph AND g.pr = r.pr AND g.pt = r.pt AND g.text = r.text
)
SELECT ph, pr, pt, j, $attempt AS attempt, part, head, relation, tail, text,
       CASE WHEN reason0 IS NOT NULL THEN reason0
            WHEN row_number() OVER (PARTITION BY ph, pr, pt, text, reason0 IS NULL ORDER BY j) > 1
                THEN 'duplicate_negative'
       END AS reason
FROM checked
