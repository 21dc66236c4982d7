/// The arbiter's server side: picking the route, the parking sink, the reconcile loop that carries out
/// `RoutePlanner`'s steps, and what happens when a sink or the whole server goes away.
extension RoutingArbiter {
    /// Stream properties that tag our sink inputs (set by `configure`).
    static let instanceProperty = "multiview.instance"
    static let viewProperty = "multiview.view"

    var parkingSinkName: String { "multiview_parked_\(instance.replacingOccurrences(of: "-", with: "_"))" }

    /// Takes a new connection and starts listening to its events.
    func attachServer(_ newServer: any PulseAudioServer) {
        server = newServer
        let events = newServer.events()
        listener?.cancel()
        listener = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.serverEvent(event, from: newServer)
            }
        }
    }

    /// Picks the route: `--audio-route` (or the default sink) among the server's sinks.
    func pickRoute(useDefaultSink: Bool) async throws(RoutingError) {
        guard let server else { return }
        let defaultSink: String, sinks: [PulseSink]
        do throws(PulseAudioError) {
            defaultSink = try await server.serverDefaultSinkName()
            sinks = try await server.sinks()
        } catch { throw .pulseAudio(error) }
        let name = useDefaultSink ? defaultSink : configuration.audioRoute ?? defaultSink
        guard let sink = sinks.first(where: { $0.name == name }) else {
            throw .noSuchSink(name, available: sinks.map(\.name))
        }
        guard self.server === server, route == nil else { return }
        let chosen = AudioRoute(sink: sink, defaultSinkName: defaultSink, markedNonMixable: configuration.nonMixable)
        route = chosen
        emit(.audioRoute(chosen))
        if chosen.isNonMixable { await ensureParkingSink() }
    }

    /// Loads the parking sink unless it is there (or being loaded).
    func ensureParkingSink() async {
        guard parking == .none, let server else { return }
        parking = .loading
        let name = parkingSinkName
        do throws(PulseAudioError) {
            let module = try await server.loadModule("module-null-sink", arguments:
                "sink_name=\(name) sink_properties=device.description=Multiview-suppressed-audio")
            if self.server === server, parking == .loading {
                parking = .loaded(name: name, module: module)
            } else {
                // Shut down or reconnected meanwhile: this sink belongs to nobody.
                try? await server.unloadModule(module)
            }
        } catch {
            if parking == .loading { parking = .none }
            emit(.failed(.pulseAudio(error)))
        }
    }

    // MARK: The reconcile loop

    /// Brings the server to the preferences and returns once a pass that started after this call has finished.
    /// Passes run one at a time (a plan is carried out over several awaits; two interleaved plans could put two
    /// streams on a non-mixable route); requests made during a pass are served by one more pass.
    func reconcile() async {
        let pass = requestReconcile()
        guard !isShutDown else { return }
        await withCheckedContinuation { passWaiters.append((pass, $0)) }
    }

    /// Asks for a pass without waiting for it (server events).
    @discardableResult
    func requestReconcile() -> Int {
        requestedPass += 1
        if passRunner == nil && !isShutDown {
            passRunner = Task { await self.runPasses() }
        }
        return requestedPass
    }

    private func runPasses() async {
        while completedPass < requestedPass && !isShutDown {
            let target = requestedPass
            await reconcilePass()
            completedPass = target
            let done = passWaiters.filter { $0.pass <= target }
            passWaiters.removeAll { $0.pass <= target }
            for waiter in done { waiter.continuation.resume() }
        }
        passRunner = nil
        finishPasses()
    }

    /// Releases everyone still waiting for a pass (after shutdown no pass runs).
    func finishPasses() {
        let waiting = passWaiters
        passWaiters = []
        for waiter in waiting { waiter.continuation.resume() }
    }

    /// One pass: read our streams and the sinks, plan, carry the steps out in order.
    private func reconcilePass() async {
        guard let server, let route else { return }
        let inputs: [PulseSinkInput], sinks: [PulseSink]
        do throws(PulseAudioError) {
            inputs = try await server.sinkInputs()
            sinks = try await server.sinks()
        } catch {
            if error != .disconnected { emit(.failed(.pulseAudio(error))) }
            return
        }
        guard self.server === server, self.route == route else { return }   // a newer pass follows
        let streams = inputs.compactMap { input -> RoutedStream? in
            guard input.properties[Self.instanceProperty] == instance,
                  let view = input.properties[Self.viewProperty].flatMap({ Int($0) }) else { return nil }
            return RoutedStream(sinkInput: input.index, view: view, sink: input.sink, muted: input.muted)
        }
        let parkingSink = parking.name.flatMap { name in sinks.first { $0.name == name }.map { ParkingSink(name: name, index: $0.index) } }
        let plan = RoutePlanner.plan(RouteSituation(
            preferredAudio: preferredParticipantForNonMixableAudioRoutes, liveViews: liveViews, endedViews: endedViews,
            routeSink: route.sinkName, routeSinkIndex: sinks.first { $0.name == route.sinkName }?.index,
            routeIsNonMixable: route.isNonMixable, parkingSink: parkingSink, streams: streams))
        if plan.problem == .routeSinkMissing { return }   // the removal event re-picks the route
        if plan.problem == .noParkingSink, parking.name != nil {
            // Someone unloaded our parking sink: load it again, then plan afresh (if loading fails, the next plan
            // mutes the leaving streams where they are and keeps the owner out).
            parking = .none
            await ensureParkingSink()
            requestReconcile()
            return
        }

        let completed = await carryOut(plan.steps, on: server)
        let unfinished = Set(plan.steps[completed...].map(\.view))
        for (view, suppressed) in plan.suppressed where !unfinished.contains(view) { setSuppressed(view, suppressed) }
        guard completed == plan.steps.count else { return }
        if route.isNonMixable, announcedOwner != .some(plan.owner) {
            announcedOwner = .some(plan.owner)
            emit(.nonMixableAudioOwner(view: plan.owner, route: route.sinkName,
                                       byDefault: plan.owner != nil && preferredParticipantForNonMixableAudioRoutes != plan.owner))
        }
    }

    /// Performs steps in order and returns how many completed. It stops at the first failure: a later step may
    /// bring a stream onto a non-mixable route that an earlier one had to clear. A stream or sink that vanished
    /// under the plan (no such entity) asks for a fresh pass (a few times in a row at most); other failures are
    /// reported; a lost connection is left to `serverLost`.
    private func carryOut(_ steps: [RouteStep], on server: any PulseAudioServer) async -> Int {
        for (i, step) in steps.enumerated() {
            do throws(PulseAudioError) {
                switch step {
                case .mute(let input, _): try await server.setMute(sinkInput: input, true)
                case .unmute(let input, _): try await server.setMute(sinkInput: input, false)
                case .moveToParking(let input, _, let sink), .moveToRoute(let input, _, let sink):
                    try await server.move(sinkInput: input, toSink: sink)
                }
            } catch {
                if error.isNoSuchEntity {
                    if staleRetries < 3 { staleRetries += 1; requestReconcile() }
                } else if error != .disconnected {
                    emit(.failed(.pulseAudio(error)))
                }
                return i
            }
        }
        staleRetries = 0
        return steps.count
    }

    func setSuppressed(_ number: Int, _ suppressed: Bool) {
        let before = audioOutputSuppressedDueToNonMixableAudioRoute[number] ?? false
        audioOutputSuppressedDueToNonMixableAudioRoute[number] = suppressed
        if before != suppressed {
            emit(.audioOutputSuppressedDueToNonMixableAudioRoute(view: number, suppressed: suppressed))
        }
    }

    // MARK: Server events

    private func serverEvent(_ event: PulseEvent, from source: any PulseAudioServer) async {
        guard source === server else { return }
        switch event {
        case .sinkRemoved(let index) where index == route?.sinkIndex:
            await routeRemoved()
        case .sinkInputAdded, .sinkInputChanged:
            requestReconcile()
        case .disconnected:
            serverLost()
        default:
            break
        }
    }

    /// The server went away: routing pauses (the players play on silently, see `Player.audioOutputLost`) and a task
    /// reconnects every `reconnectInterval`; then the route is picked again (falling back to the default sink when
    /// the routed sink did not come back) and the streams, as they return, are placed again.
    private func serverLost() {
        guard server != nil, !isShutDown else { return }
        emit(.pulseAudioUnavailable(.disconnected))
        listener?.cancel()
        listener = nil
        server = nil
        route = nil
        parking = .none
        announcedOwner = nil
        reconnect?.cancel()
        reconnect = Task { [weak self, connect, reconnectInterval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: reconnectInterval)
                guard !Task.isCancelled, let server = try? await connect() else { continue }
                await self?.serverBack(server)
                return
            }
        }
    }

    private func serverBack(_ newServer: any PulseAudioServer) async {
        guard !isShutDown else { return }
        attachServer(newServer)
        emit(.pulseAudioBack)
        do throws(RoutingError) {
            try await pickRoute(useDefaultSink: false)
        } catch {
            if let wanted = configuration.audioRoute, let fallback = try? await newServer.serverDefaultSinkName() {
                emit(.routeLost(sink: wanted, fallback: fallback))
            }
            do throws(RoutingError) { try await pickRoute(useDefaultSink: true) } catch { emit(.failed(error)) }
        }
        requestReconcile()
    }

    /// The routed sink is gone: the server already moved our streams to its default sink; that becomes the route.
    private func routeRemoved() async {
        guard let server, let lost = route else { return }
        let defaultSink: String, sinks: [PulseSink]
        do throws(PulseAudioError) {
            defaultSink = try await server.serverDefaultSinkName()
            sinks = try await server.sinks()
        } catch {
            if error != .disconnected { emit(.failed(.pulseAudio(error))) }
            return
        }
        guard self.server === server, route == lost else { return }
        guard let sink = sinks.first(where: { $0.name == defaultSink }) else {
            emit(.failed(.noFallbackSink(lost: lost.sinkName)))
            return
        }
        let fallback = AudioRoute(sink: sink, defaultSinkName: defaultSink, markedNonMixable: configuration.nonMixable)
        route = fallback
        emit(.routeLost(sink: lost.sinkName, fallback: fallback.sinkName))
        emit(.audioRoute(fallback))
        announcedOwner = nil
        if fallback.isNonMixable { await ensureParkingSink() }
        requestReconcile()
    }
}
