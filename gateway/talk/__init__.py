"""Talk (voice) in the bundled gateway: ``talk.catalog``, ``talk.config``, ``talk.mode``,
``talk.speak`` and transcription sessions (``talk.session.*``, ``talk.event``).

* :mod:`~gateway.talk.service`: sessions (owned per connection, TTL, bounded audio), mode,
  speech; :mod:`~gateway.talk.session`: one session's audio pipeline;
* :mod:`~gateway.talk.stt`: pocketsphinx (offline) and OpenAI-compatible transcription;
* :mod:`~gateway.talk.tts`: espeak-ng (offline) and OpenAI-compatible speech;
* :mod:`~gateway.talk.config`: ``talk.json``; :mod:`~gateway.talk.setup`: wiring.

Audio codecs and resampling come from :mod:`openclaw_desktop.protocol.audio`. Nothing is
imported here: the service, numpy and the providers load when the server starts talk.
"""
