SELECT localportal_to_floating(t."f", 'America/Los_Angeles') AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
