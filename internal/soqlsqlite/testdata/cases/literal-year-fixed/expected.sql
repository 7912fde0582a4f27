SELECT count(*) AS "c" FROM "ds_form_0001" AS t WHERE (t."f" >= '2023-01-01T00:00:00.000Z') LIMIT 1000
