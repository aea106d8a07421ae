-- Every entity n with subject -> relation -> n, for each (subject, relation) pair of the registered table
-- _fpq_premise_relations: the subject's objects of an edited relation, where the walk to the places that hold
-- them starts. Only that relation's triples of the subject come back, not all its edges. premise_objects_in is
-- the other direction.
SELECT q.subject, q.relation, t.tail AS object
FROM _fpq_premise_relations AS q
JOIN triples AS t ON t.head = q.subject AND t.relation = q.relation
JOIN entities AS e ON e.id = t.tail
