package org.stairsense.testing;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.io.PrintWriter;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Runs every JUnit 5 test under {@code org.stairsense} through the JUnit Platform Launcher API.
 *
 * <p>Why not the console launcher: it ships as one "standalone" jar that Maven-local repositories
 * often lack; the launcher API is in {@code junit-platform-launcher}, which every JUnit 5
 * installation has (Debian's {@code junit5} package, a Maven cache). Exit status 1 on any failure.
 */
public final class RunJUnit {
    private RunJUnit() {
    }

    public static void main(String[] args) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectPackage("org.stairsense"))
                .build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        launcher.execute(request, summary, new OneLinePerTest());
        PrintWriter out = new PrintWriter(System.out, true);
        summary.getSummary().printFailuresTo(out, 20);
        summary.getSummary().printTo(out);
        boolean failed = summary.getSummary().getTotalFailureCount() > 0 || summary.getSummary().getTestsFoundCount() == 0;
        System.exit(failed ? 1 : 0);
    }

    /** Prints each test's outcome and name as it finishes. */
    private static final class OneLinePerTest implements TestExecutionListener {
        @Override
        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            if (!id.isTest()) {
                return;
            }
            String name = id.getDisplayName();
            if (id.getSource().orElse(null) instanceof MethodSource) {
                MethodSource m = (MethodSource) id.getSource().get();
                name = m.getClassName().replaceFirst(".*\\.", "") + "." + m.getMethodName();
            }
            System.out.println((result.getStatus() == TestExecutionResult.Status.SUCCESSFUL ? "ok    " : "FAIL  ") + name);
        }
    }
}
