package org.stairsense.app;

import android.app.Activity;
import android.content.Intent;
import android.os.Bundle;
import android.widget.TextView;

/**
 * One screen: the step and stair-step counters and which model runs, updated as {@link StepCounts}
 * changes. It listens only while it is in front, which is what makes {@link SensorStream} flush the
 * sensor hub's batches so the counts on it are live.
 */
public final class MainActivity extends Activity {
    /** Android 14 requires it for a "health" foreground service reading motion sensors. */
    static final String ACTIVITY_RECOGNITION = "android.permission.ACTIVITY_RECOGNITION";

    private TextView text;
    private final StepCounts.Listener listener = (steps, stairSteps) ->
            runOnUiThread(() -> text.setText(steps + " steps\n" + stairSteps + " stair steps\n"
                    + floors(StepCounts.INSTANCE) + StepCounts.INSTANCE.model()));

    /** "2 floors up, 1 down" with a barometer model; nothing without one (it cannot tell up from down). */
    static String floors(StepCounts counts) {
        long up = counts.floorsAscended();
        return up < 0 ? "" : up + " floors up, " + counts.floorsDescended() + " down\n";
    }

    @Override
    protected void onCreate(Bundle savedInstanceState) {
        super.onCreate(savedInstanceState);
        text = new TextView(this);
        setContentView(text);
        requestPermissions(new String[] {ACTIVITY_RECOGNITION, "android.permission.POST_NOTIFICATIONS"}, 1);
    }

    @Override
    public void onRequestPermissionsResult(int requestCode, String[] permissions, int[] grantResults) {
        startForegroundService(new Intent(this, StairStepService.class));
    }

    @Override
    protected void onResume() {
        super.onResume();
        StepCounts.INSTANCE.addListener(listener);
    }

    @Override
    protected void onPause() {
        StepCounts.INSTANCE.removeListener(listener);
        super.onPause();
    }
}
