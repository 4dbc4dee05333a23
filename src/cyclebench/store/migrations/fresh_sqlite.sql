-- revision 0010
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO "alembic_version" VALUES('0010');
CREATE TABLE fleet_hosts (
	id INTEGER NOT NULL, 
	job_id INTEGER NOT NULL, 
	host VARCHAR(255) NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	reason TEXT, 
	finished_at VARCHAR(40), 
	"check" JSON, 
	run_ids JSON, 
	machine JSON, 
	PRIMARY KEY (id), 
	FOREIGN KEY(job_id) REFERENCES fleet_jobs (id) ON DELETE CASCADE
);
CREATE TABLE fleet_jobs (
	id INTEGER NOT NULL, 
	started_at VARCHAR(40) NOT NULL, 
	finished_at VARCHAR(40), 
	status VARCHAR(20) NOT NULL, 
	inventory TEXT, 
	command JSON, 
	mode VARCHAR(20), 
	PRIMARY KEY (id)
);
CREATE TABLE meta (
	"key" VARCHAR(40) NOT NULL, 
	value VARCHAR(255), 
	PRIMARY KEY ("key")
);
INSERT INTO "meta" VALUES('schema_version','3');
CREATE TABLE predictions (
	id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	bench VARCHAR(255) NOT NULL, 
	param BIGINT, 
	variant VARCHAR(255) NOT NULL, 
	tool VARCHAR(20) NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	reason TEXT, 
	tool_version VARCHAR(40), 
	mcpu VARCHAR(40), 
	cpu_model VARCHAR(255), 
	cycles_per_iter FLOAT, 
	trips_per_op FLOAT, 
	cycles_per_op FLOAT, 
	throughput FLOAT, 
	lcd FLOAT, 
	detail JSON, 
	created_at VARCHAR(40) NOT NULL, coverage FLOAT, 
	PRIMARY KEY (id), 
	FOREIGN KEY(run_id) REFERENCES runs (id) ON DELETE CASCADE
);
CREATE TABLE results (
	id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	bench VARCHAR(255) NOT NULL, 
	param BIGINT, 
	variant VARCHAR(255) NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	reason TEXT, 
	unit VARCHAR(20), 
	per_op FLOAT, 
	ci_low FLOAT, 
	ci_high FLOAT, 
	intercept FLOAT, 
	median FLOAT, 
	median_ci_low FLOAT, 
	median_ci_high FLOAT, 
	min FLOAT, 
	mad FLOAT, 
	mean FLOAT, 
	cv FLOAT, 
	rcv FLOAT, 
	confidence FLOAT, 
	method VARCHAR(20), 
	rounds INTEGER, 
	ns_per_op FLOAT, 
	cycles_per_op FLOAT, 
	cycles_ci_low FLOAT, 
	cycles_ci_high FLOAT, 
	cycles_min FLOAT, 
	cycles_rcv FLOAT, 
	core_ghz FLOAT, 
	ratio_rcv FLOAT, 
	chain_agreement FLOAT, 
	n_disturbed INTEGER, 
	n_trimmed INTEGER, 
	pmu_cycles_per_op FLOAT, 
	pmu_ci_low FLOAT, 
	pmu_ci_high FLOAT, 
	pmu_agreement FLOAT, 
	net_per_op FLOAT, 
	net_ci_low FLOAT, 
	net_ci_high FLOAT, 
	cycles_net FLOAT, 
	cycles_net_ci_low FLOAT, 
	cycles_net_ci_high FLOAT, 
	n_samples INTEGER, 
	outliers INTEGER, 
	timer_overhead FLOAT, 
	wall_s FLOAT, 
	created_at VARCHAR(40) NOT NULL, 
	extra JSON, kind VARCHAR(20), plan_index INTEGER, 
	PRIMARY KEY (id), 
	FOREIGN KEY(run_id) REFERENCES runs (id) ON DELETE CASCADE
);
CREATE TABLE runs (
	id INTEGER NOT NULL, 
	started_at VARCHAR(40) NOT NULL, 
	finished_at VARCHAR(40), 
	status VARCHAR(20) NOT NULL, 
	command JSON, 
	host VARCHAR(255), 
	cpu_model VARCHAR(255), 
	cpu INTEGER, 
	tool_version VARCHAR(40), 
	code_rev VARCHAR(80), 
	build JSON, 
	calibration JSON, 
	env JSON, 
	summary JSON, host_id VARCHAR(64), pid INTEGER, heartbeat_at VARCHAR(40), labels JSON, group_id INTEGER, kernel_release VARCHAR(255), kernel_version VARCHAR(255), boot_id VARCHAR(64), microcode VARCHAR(40), compiler VARCHAR(255), code_dirty BOOLEAN, pid_start BIGINT, purpose VARCHAR(20), 
	PRIMARY KEY (id)
);
CREATE TABLE samples (
	result_id INTEGER NOT NULL, 
	idx INTEGER NOT NULL, 
	iters BIGINT NOT NULL, 
	ticks BIGINT NOT NULL, 
	cal BIGINT, 
	disturbed INTEGER, 
	pmu BIGINT, 
	FOREIGN KEY(result_id) REFERENCES results (id) ON DELETE CASCADE
);
CREATE INDEX ix_results_bench ON results (bench);
CREATE INDEX ix_results_run_id ON results (run_id);
CREATE INDEX ix_samples_result_id ON samples (result_id);
CREATE INDEX ix_runs_group_id ON runs (group_id);
CREATE INDEX ix_fleet_hosts_job_id ON fleet_hosts (job_id);
CREATE INDEX ix_fleet_hosts_host ON fleet_hosts (host);
CREATE INDEX ix_predictions_run_id ON predictions (run_id);
