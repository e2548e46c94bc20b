"""How much work Spark did for a piece of code: jobs, stages and tasks, without a SparkListener.

Job ids are consecutive per SparkContext. ``SparkWork`` runs a one-task marker job before and
after the measured code and counts the job ids in between, so jobs that adaptive query
execution submits on its own (one per shuffle stage it materialises) are counted too, whatever
job group they carry. Stages and tasks come from the status tracker (it keeps the last
``spark.ui.retainedJobs``, 1000 by default, which is plenty for one analysis). Only meaningful
when nothing else runs jobs on the same SparkContext meanwhile (benchmarks, tests).
"""


class SparkWork:
    def __init__(self, spark):
        self.sc = spark.sparkContext
        self.first = self.last = None

    def _marker(self):
        tracker = self.sc.statusTracker()
        group = "isrlab-work-marker"
        self.sc.setJobGroup(group, "job counter marker")
        try:
            self.sc.parallelize([0], 1).count()
        finally:
            self.sc.setLocalProperty("spark.jobGroup.id", None)
            self.sc.setLocalProperty("spark.job.description", None)
        return max(tracker.getJobIdsForGroup(group))

    def __enter__(self):
        self.first = self._marker()
        return self

    def __exit__(self, *exc):
        self.last = self._marker()
        return False

    @property
    def job_ids(self):
        return range(self.first + 1, self.last)

    def summary(self):
        """{"jobs", "stages", "tasks"}: jobs in between the markers, their stages that ran
        (skipped stages, whose output was reused, are not counted) and their tasks."""
        tracker = self.sc.statusTracker()
        stages = set()
        for job_id in self.job_ids:
            info = tracker.getJobInfo(job_id)
            if info is not None:
                stages.update(info.stageIds)
        tasks = ran = 0
        for stage_id in stages:
            info = tracker.getStageInfo(stage_id)
            if info is not None and info.numCompletedTasks:
                ran += 1
                tasks += info.numCompletedTasks
        return {"jobs": len(self.job_ids), "stages": ran, "tasks": tasks}
