SELECT localportal_pad('7', 3, '0', 1) AS "x" FROM "ds_func_0001" AS t LIMIT 1
