SELECT CAST(julianday(substr(t."d", 1, 23)) - julianday(substr('2024-03-01T00:00:00', 1, 23)) AS INTEGER) AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
