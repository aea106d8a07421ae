-- The relations of the triples n -> relation -> subject for each (subject, false object, n) of the registered table
-- _fpq_named (premise_named's rows): the other direction of premise_names_out.
SELECT n.subject, n.false_object, t.relation
FROM _fpq_named AS n
JOIN triples AS t ON t.tail = n.subject AND t.head = n.neighbour
