-- Parse one delimited triples file; malformed rows land in the temporary table _csv_rej_err with their line.
CREATE OR REPLACE TEMP TABLE _csv_rows AS
SELECT trim(head) AS head, trim(relation) AS relation, trim(tail) AS tail
FROM read_csv(
    $path,
    delim = $delim, quote = $quote, escape = $quote, header = $header, encoding = $encoding,
    columns = {'head': 'VARCHAR', 'relation': 'VARCHAR', 'tail': 'VARCHAR'},
    auto_detect = false, strict_mode = true, null_padding = false,
    store_rejects = true, rejects_table = '_csv_rej_err', rejects_scan = '_csv_rej_scan'
)
