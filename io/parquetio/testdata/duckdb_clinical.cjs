// Generates duckdb_clinical.parquet, a small clinical-style table written by
// DuckDB (1.5.6 when committed) for parquetio's DECIMAL and NULL tests
// (TestReadDuckDBClinical): VARCHAR sites and action labels, a VARCHAR
// patient_id, a time column t numbered from 0, lactate as DECIMAL(6,2)
// (stored as INT32), sofa as DECIMAL(12,1) (INT64), weight as
// DECIMAL(20,3) (FIXED_LEN_BYTE_ARRAY), a DOUBLE reward, and NULLs in
// lactate. The values follow closed-form formulas the test recomputes.
//
// Run from this directory (needs node and npm; the Go tests do not):
//
//	npm install --prefix /tmp/duckdb-gen @duckdb/node-api
//	NODE_PATH=/tmp/duckdb-gen/node_modules node duckdb_clinical.cjs
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const version = await con.runAndReadAll('SELECT version()');
  console.log('duckdb', version.getRows()[0][0]);
  await con.run(`
    COPY (
      WITH s(sid, hospital) AS (VALUES (0, 'general'), (1, 'mercy'), (2, 'st-luke')),
      e AS (
        SELECT sid, hospital, p.p AS p, h.t AS t
        FROM s, range(0, 40) p(p), range(0, 4) h(t)
        WHERE h.t <= (p.p + sid) % 4
      )
      SELECT hospital,
        'P' || lpad((sid * 1000 + p)::VARCHAR, 5, '0') AS patient_id,
        t::INTEGER AS t,
        (['fluids', 'pressors', 'both'])[1 + (p * 7 + t * 3 + sid) % 3] AS treatment,
        CASE WHEN (p * 11 + t * 5 + sid) % 17 = 3 THEN NULL
             ELSE ((p * 37 + t * 53 + sid * 7) % 900 + 50) / 100.0 END::DECIMAL(6,2) AS lactate,
        (((p * 13 + t * 7 + sid) % 200) / 10.0)::DECIMAL(12,1) AS sofa,
        ((p * 7919 + t * 104729 + sid) % 100000 / 1000.0)::DECIMAL(20,3) AS weight,
        ((p * 3 + t * 5 + sid) % 11) / 10.0 AS reward
      FROM e
      ORDER BY (p * 31 + t * 17 + sid * 7) % 101, sid, p, t
    ) TO 'duckdb_clinical.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)
  `);
  const d = await con.runAndReadAll(`SELECT name, type, logical_type FROM parquet_schema('duckdb_clinical.parquet')`);
  for (const row of d.getRows()) console.log(row.join(' '));
  const n = await con.runAndReadAll(`SELECT count(*), count(lactate) FROM 'duckdb_clinical.parquet'`);
  console.log('rows, non-null lactate:', n.getRows()[0].join(', '));
}

main().catch((e) => { console.error(e); process.exit(1); });
