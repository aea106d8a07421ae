-- The relations of the triples subject -> relation -> n for each (subject, false object, n) of the registered table
-- _fpq_named (premise_named's rows). premise_names_in is the other direction.
SELECT n.subject, n.false_object, t.relation
FROM _fpq_named AS n
JOIN triples AS t ON t.head = n.subject AND t.tail = n.neighbour
