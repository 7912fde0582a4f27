SELECT count(*) AS "c" FROM "ds_form_0001" AS t WHERE (t."d" > '2023-01-01T00:00:00.000') LIMIT 1000
