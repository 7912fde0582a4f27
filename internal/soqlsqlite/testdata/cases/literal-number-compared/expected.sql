SELECT count(*) AS "c" FROM "ds_type_0001" AS t WHERE (t."n" = 3) LIMIT 1000
