// Generates duckdb_trajectories.parquet, a small trajectory table written by
// DuckDB (1.5.6 when committed), for parquetio's compatibility test
// (TestReadDuckDB). The values follow closed-form formulas that the test
// recomputes in Go; the rows are shuffled and span two row groups (DuckDB
// rounds ROW_GROUP_SIZE up to a multiple of 2048).
//
// It also checks that DuckDB reads a policy written by parquetio's
// WritePolicy, when given one: node duckdb_gen.cjs policy.parquet
//
// Run from this directory (needs node and npm; the Go tests do not):
//
//	npm install --prefix /tmp/duckdb-gen @duckdb/node-api
//	NODE_PATH=/tmp/duckdb-gen/node_modules node duckdb_gen.cjs
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const version = await con.runAndReadAll('SELECT version()');
  console.log('duckdb', version.getRows()[0][0]);
  await con.run(`
    COPY (
      WITH s(sid, site) AS (VALUES (0, 'north'), (1, 'south'), (2, 'east')),
      t AS (
        SELECT sid, site, tr.traj::BIGINT AS traj, h.step::INTEGER AS step
        FROM s, range(1, 401) tr(traj), range(1, 6) h(step)
        WHERE h.step <= 1 + (tr.traj + sid) % 5
      )
      SELECT site, traj, step,
        ((traj * 7 + step * 3 + sid) % 2)::INTEGER AS action,
        ((traj * 13 + step * 7 + sid * 5) % 11) / 10.0 AS reward,
        (1 + (traj + step) % 4)::DOUBLE AS s1,
        ((traj * step) % 3)::DOUBLE AS s2,
        ((traj + 2 * step + sid) % 5 / 4.0)::DOUBLE AS s3,
        [((traj + step) % 5) / 4.0, 1 - ((traj + step) % 5) / 4.0,
         ((traj * step) % 3) / 2.0, 1 - ((traj * step) % 3) / 2.0]::DOUBLE[4] AS phi
      FROM t
      ORDER BY (traj * 7919 + step * 104729 + sid * 1299709) % 10007, sid, traj, step
    ) TO 'duckdb_trajectories.parquet' (FORMAT parquet, ROW_GROUP_SIZE 1000)
  `);
  const n = await con.runAndReadAll(`
    SELECT (SELECT count(*) FROM 'duckdb_trajectories.parquet'),
           (SELECT count(DISTINCT row_group_id) FROM parquet_metadata('duckdb_trajectories.parquet'))`);
  console.log('rows, row groups:', n.getRows()[0].map(String).join(', '));

  const policy = process.argv[2];
  if (policy) {
    const p = await con.runAndReadAll(`
      SELECT step, "group", len(w), len(m), len(linv), len(fallback), w[1]
      FROM read_parquet('${policy}') ORDER BY step, "group"`);
    console.log('policy rows:', JSON.stringify(p.getRows().map((r) => r.map(String))));
    const kv = await con.runAndReadAll(`
      SELECT decode(key), decode(value) FROM parquet_kv_metadata('${policy}')`);
    console.log('policy metadata:', JSON.stringify(kv.getRows()));
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
