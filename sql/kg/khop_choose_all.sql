-- Uncapped expansion: every distinct neighbour (either edge direction, self loops aside) of the frontier nodes
-- at $depth that no earlier hop has expanded yet.
INSERT INTO _khop_choice
WITH frontier AS (
    SELECT DISTINCT node FROM _khop_reached
    WHERE depth = $depth AND node NOT IN (SELECT node FROM _khop_choice)
),
nbrs AS (
    SELECT f.node, t.tail AS nbr FROM frontier AS f JOIN triples AS t ON t.head = f.node WHERE t.tail <> f.node
    UNION
    SELECT f.node, t.head AS nbr FROM frontier AS f JOIN triples AS t ON t.tail = f.node WHERE t.head <> f.node
)
SELECT node, nbr, NULL AS degree FROM nbrs
