/** "wrapped in ListenerExecutionFailedException" after a cause's class, with the wrapper's full name on hover. */
export function WrappedIn({ wrapperClass }: { wrapperClass: string | null | undefined }) {
  if (!wrapperClass) return null;
  const simple = wrapperClass.slice(wrapperClass.lastIndexOf(".") + 1) || wrapperClass;
  return (
    <span className="muted" data-testid="exception-wrapper" title={wrapperClass}>
      {" "}
      (wrapped in <span className="mono">{simple}</span>)
    </span>
  );
}
