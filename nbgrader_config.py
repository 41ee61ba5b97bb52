# nbgrader configuration for this course. Run nbgrader commands from this folder.
#
# nbgrader's words differ from ours: its "source" directory is our solutions/ (the
# instructor copy with solutions and hidden tests, the only one edited by hand) and its
# "release" directory is our notebooks/ (generated student versions). nbgrader's own
# "solution" is something else again: the region between BEGIN/END SOLUTION markers.
from autograder.nbgrader_settings import configure

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file
configure(c)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
